/** What a user registry answers about a user name and password. */

/** The credentials a caller presented, and the `Authorization: Basic` value that carries them. */
export interface BasicCredentials {
  username: string;
  password: string;
  /** `Basic <base64>` as presented (or as built from a form), forwarded to an authentication URL. */
  header: string;
}

/**
 * `authenticated`: the registry vouched for the user. `refused`: it did not (401).
 * `unavailable`: it could not answer — down, timing out, misconfigured (503: fail closed).
 */
export type Verdict =
  { outcome: 'authenticated'; user: string } | { outcome: 'refused' } | { outcome: 'unavailable'; reason: string };

/** One registry as the gateway calls it, compiled into the snapshot. */
export interface UserVerifier {
  /** The registry's name (the one security definitions and policies write). */
  readonly registry: string;
  verify(credentials: BasicCredentials): Promise<Verdict>;
}

/** Reads `Authorization: Basic <base64(user:password)>` (RFC 7617); undefined when absent or malformed. */
export function parseBasicHeader(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined || header.length > 4096) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), header };
}

/** The `Authorization: Basic` value for credentials read from a form or context variables. */
export function basicHeaderFor(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
