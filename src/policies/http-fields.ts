/**
 * Header fields that belong to one connection, not to the message (RFC 9110 §7.6.1): never
 * forwarded by invoke, never passed from a backend's answer to the consumer. `content-length`
 * is set anew by whoever writes the body.
 */
export const hopByHopFields: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
]);
