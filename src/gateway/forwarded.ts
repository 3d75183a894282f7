/**
 * Forwarded headers at the gateway's ingress. A client could otherwise name any address as its
 * own in `X-Forwarded-For` and have backends (and their allow lists, logs and rate limits) believe
 * it. Only a trusted proxy (`PORTICO_TRUSTED_PROXIES`) may speak for the client; from anyone else
 * `Forwarded` (RFC 7239), `X-Forwarded-*` and `X-Real-IP` are dropped. The gateway then sets
 * `X-Forwarded-For`, `-Proto` and `-Host` toward the backend, as nginx's `$proxy_add_x_forwarded_for`
 * and Kong do: the peer appended to a trusted chain, or the peer alone.
 */
import { BlockList, isIPv4 } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** `true` for a peer address listed in `entries` (addresses or CIDR blocks), compiled once. */
export function trustedPeers(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    // An IPv4 client of a dual-stack listener arrives as `::ffff:a.b.c.d`.
    const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    return list.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
  };
}

const clientClaims = ['forwarded', 'x-real-ip'];

/**
 * The client's address before `setForwardedHeaders` runs: the peer, or behind a trusted proxy the
 * last address that proxy appended to `X-Forwarded-For` (the entries left of it are the client's claims).
 */
export function clientAddress(req: IncomingMessage, trusted: (address: string) => boolean): string {
  const peer = req.socket.remoteAddress ?? '';
  const chain = req.headers['x-forwarded-for'];
  if (!trusted(peer) || typeof chain !== 'string') return peer;
  return chain.split(',').pop()!.trim() || peer;
}

/** Rewrites `req.headers` in place: what the backend may believe about the client and the URL it used. */
export function setForwardedHeaders(req: IncomingMessage, trusted: (address: string) => boolean): void {
  const headers = req.headers;
  const peer = req.socket.remoteAddress ?? '';
  if (!trusted(peer)) dropClaims(headers);
  const chain = headers['x-forwarded-for'];
  headers['x-forwarded-for'] = chain ? `${chain}, ${peer}` : peer;
  headers['x-forwarded-proto'] ??= 'encrypted' in req.socket ? 'https' : 'http';
  if (headers.host !== undefined) headers['x-forwarded-host'] ??= headers.host;
}

function dropClaims(headers: IncomingHttpHeaders): void {
  for (const name of clientClaims) if (name in headers) delete headers[name];
  for (const name of Object.keys(headers)) if (name.startsWith('x-forwarded-')) delete headers[name];
}
