/**
 * Stateless pre-sessions: what a visitor who is not signed in holds so that the sign-in and
 * sign-up forms can require a login-CSRF token (OWASP CSRF cheat sheet, "Login CSRF") without a
 * write to the store per anonymous request. The cookie is `nonce.issuedAt.mac`: a random nonce,
 * the issue time (epoch ms) and an HMAC-SHA256 over kind, nonce and time with the installation's
 * key (store/server-keys.ts). The form's token is another HMAC of kind and nonce, so only the
 * server can mint a cookie and its token, and a client cannot choose the token it is asked for.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type PreSessionKind = 'pre-portal' | 'pre-provider';

/** A sign-in form left open longer than this answers 403 "reload the page". */
export const preSessionTtlMs = 2 * 3600 * 1000;

// Nodes' clocks differ a little: a cookie another node issued slightly "in the future" still counts.
const clockSkewMs = 5 * 60 * 1000;

const cookiePattern = /^([A-Za-z0-9_-]{43})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/;

// The parts never contain '|': kinds are fixed words, nonces base64url, times digits.
function mac(key: Buffer, ...parts: string[]): string {
  return createHmac('sha256', key).update(parts.join('|')).digest('base64url');
}

/** A new pre-session cookie value for `kind`, signed with `key`, and its nonce. */
export function issuePreSession(
  key: Buffer,
  kind: PreSessionKind,
  issuedAt = Date.now(),
): { cookie: string; nonce: string } {
  const nonce = randomBytes(32).toString('base64url');
  const at = String(issuedAt);
  return { cookie: `${nonce}.${at}.${mac(key, 'pre-session', kind, nonce, at)}`, nonce };
}

/**
 * The nonce of a pre-session cookie the server signed with `key` for `kind` less than 2 hours
 * before `now`; undefined for anything else (made up, tampered with, of the other kind, too old).
 */
export function verifyPreSession(
  key: Buffer,
  kind: PreSessionKind,
  cookie: string,
  now = Date.now(),
): string | undefined {
  const match = cookiePattern.exec(cookie);
  if (!match) return undefined;
  const [, nonce, at, presented] = match;
  const expected = Buffer.from(mac(key, 'pre-session', kind, nonce, at));
  const given = Buffer.from(presented);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const issuedAt = Number(at);
  if (now - issuedAt > preSessionTtlMs || issuedAt - now > clockSkewMs) return undefined;
  return nonce;
}

/** The CSRF token the forms of the pre-session with this nonce must echo. */
export function preSessionCsrfToken(key: Buffer, kind: PreSessionKind, nonce: string): string {
  return mac(key, 'csrf', kind, nonce);
}
