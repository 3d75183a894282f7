/**
 * Header fields that belong to one connection, not to the message (RFC 9110 §7.6.1): never
 * forwarded by invoke, never passed from a backend's answer to the consumer. `content-length`
 * is set anew by whoever writes the body. `Proxy-Authorization` and `Proxy-Authenticate` are
 * for the next proxy on the chain only (RFC 9110 §11.7.1, §11.7.2): the gateway is that proxy.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { prototypeFree } from './variable-names.ts';

export const hopByHopFields: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'proxy-authorization',
  'proxy-authenticate',
]);

/**
 * The fields a `Connection` header names (RFC 9110 §7.6.1), in lower case; none for the values
 * nearly every client and backend send (`keep-alive`, `close`, in any case), which are checked
 * without a split: a split costs about 200 ns an answer.
 */
export function connectionOptions(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined || value === 'keep-alive' || value === 'close') return undefined;
  if (typeof value === 'string' && (value.length === 10 || value.length === 5)) {
    const lower = value.toLowerCase();
    if (lower === 'keep-alive' || lower === 'close') return undefined;
  }
  const names: string[] = [];
  for (const token of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const name = token.trim().toLowerCase();
    if (name.length > 0 && name !== 'keep-alive' && name !== 'close') names.push(name);
  }
  return names.length > 0 ? names : undefined;
}

/**
 * Deletes from a request's headers the fields its `Connection` header names, at ingress: before
 * the gateway adds fields of its own, so a consumer's list never removes those. `Host` stays: the
 * gateway reads it for `request.uri` and `X-Forwarded-Host`, and invoke sets the backend's anew.
 */
export function dropConnectionOptions(headers: IncomingHttpHeaders): void {
  const names = connectionOptions(headers.connection);
  if (names === undefined) return;
  for (const name of names) if (name !== 'host' && name in headers) delete headers[name];
}

/**
 * A backend answer's fields as `message.headers` holds them: own fields only, less `dropped` and
 * the fields the answer's `Connection` names. Repeated lines are joined with ", " (RFC 9110 §5.3),
 * except `Set-Cookie`, which must never be folded (RFC 6265 §3): several lines stay a list of
 * values, as DataPower gives them to GatewayScript, and the consumer gets them as several lines.
 */
export function answerFields(answered: IncomingHttpHeaders, dropped: ReadonlySet<string>): Record<string, string> {
  const fields = prototypeFree<Record<string, string | string[]>>();
  const named = connectionOptions(answered.connection);
  for (const name of Object.keys(answered)) {
    const value = answered[name];
    if (value === undefined || dropped.has(name) || named?.includes(name)) continue;
    fields[name] = !Array.isArray(value) || name === 'set-cookie' ? value : value.join(', ');
  }
  // A `set-cookie` list is the one value that is not a string; the writers of the answer take both.
  return fields as Record<string, string>;
}
