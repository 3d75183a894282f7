/**
 * The LDAP registry (IBM "LDAP authentication"), through ldapts: search-then-bind (a service
 * DN, or anonymous, finds the user's entry, then the gateway binds as it with the password)
 * or direct bind to a DN composed from the user name. ldap://, ldaps:// and StartTLS. The user
 * name is escaped for filters (RFC 4515 §3) and DNs (RFC 4514 §2.4), so it can never widen a
 * search or name another entry; an empty password is refused before any bind (RFC 4513 §5.1.2:
 * it would be an unauthenticated bind, which servers answer with success).
 */
import { Client, InvalidCredentialsError, ResultCodeError } from 'ldapts';
import type { ConnectionOptions } from 'node:tls';
import type { TlsMaterial } from './authurl.ts';
import type { LdapConfiguration } from './registry-config.ts';
import type { BasicCredentials, UserVerifier, Verdict } from './types.ts';
import { VerdictCache, cachedVerdict } from './verdict-cache.ts';
import type { VerdictStore } from './verdict-cache.ts';

/** RFC 4515 §3: `*`, `(`, `)`, `\` and NUL as `\XX` in an assertion value. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** RFC 4514 §2.4: special characters, a leading space or `#` and a trailing space escaped in an RDN value. */
export function escapeDnValue(value: string): string {
  let escaped = value.replace(/[,+"\\<>;=\0]/g, (c) => (c === '\0' ? '\\00' : `\\${c}`));
  if (escaped.startsWith(' ') || escaped.startsWith('#')) escaped = `\\${escaped}`;
  if (escaped.endsWith(' ') && !escaped.endsWith('\\ ')) escaped = `${escaped.slice(0, -1)}\\ `;
  return escaped;
}

/** Thrown inside a verification when the registry, not the caller, is at fault. */
class Unavailable extends Error {}

function tlsOptions(tls: TlsMaterial | undefined): ConnectionOptions {
  if (!tls) return {};
  return { rejectUnauthorized: tls.rejectUnauthorized ?? true, ca: tls.ca, cert: tls.cert, key: tls.key };
}

/** Compiles an LDAP registry; `version` changes whenever its configuration does. */
export function ldapVerifier(
  registry: string,
  version: string,
  config: LdapConfiguration,
  tls: TlsMaterial | undefined,
  cache: VerdictStore | undefined,
): UserVerifier {
  const timeoutMs = config.timeout * 1000;
  const connect = async (): Promise<Client> => {
    // ldapts speaks TLS from the first byte whenever tlsOptions is given: only for ldaps://.
    const secure = config.url.startsWith('ldaps:') ? { tlsOptions: tlsOptions(tls) } : {};
    const client = new Client({ url: config.url, timeout: timeoutMs, connectTimeout: timeoutMs, ...secure });
    // The certificate is checked against the URL's host (tls.connect on an open socket knows none).
    if (config.starttls) await client.startTLS({ ...tlsOptions(tls), host: new URL(config.url).hostname });
    return client;
  };
  const userDn = async (client: Client, username: string): Promise<string | undefined> => {
    if (config.authentication_method === 'compose_dn') {
      return `${config.bind_prefix ?? 'uid='}${escapeDnValue(username)}${config.bind_suffix}`;
    }
    if (config.admin_dn !== undefined) {
      try {
        await client.bind(config.admin_dn, config.admin_password);
      } catch (error) {
        throw new Unavailable(`the service DN cannot bind: ${(error as Error).message}`);
      }
    }
    const filter = `${config.search_dn_filter_prefix}${escapeFilterValue(username)}${config.search_dn_filter_suffix}`;
    const options = { scope: config.search_dn_scope, filter, attributes: ['dn'], sizeLimit: 2 };
    const found = await client.search(config.search_dn_base!, options).catch((error: Error) => {
      throw new Unavailable(`the search for the user failed: ${error.message}`);
    });
    // Two entries for one user name is ambiguous: refused rather than guessed.
    return found.searchEntries.length === 1 ? found.searchEntries[0].dn : undefined;
  };
  const call = async ({ username, password }: BasicCredentials): Promise<Verdict> => {
    if (password === '' || username === '') return { outcome: 'refused' };
    let client: Client | undefined;
    try {
      client = await connect();
      const dn = await userDn(client, username);
      if (dn === undefined) return { outcome: 'refused' };
      await client.bind(dn, password);
      return { outcome: 'authenticated', user: username };
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return { outcome: 'refused' };
      // Other result codes on the user's bind (no such object, unwilling to perform) refuse the caller.
      if (error instanceof ResultCodeError) return { outcome: 'refused' };
      return { outcome: 'unavailable', reason: (error as Error).message };
    } finally {
      await client?.unbind().catch(() => undefined);
    }
  };
  return {
    registry,
    verify: function ldap(credentials) {
      return cachedVerdict(cache, VerdictCache.key(version, credentials.header), () => call(credentials));
    },
  };
}
