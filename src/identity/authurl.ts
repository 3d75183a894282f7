/**
 * The authentication URL registry (IBM "Authentication URL user registry"): the gateway calls
 * the URL with the caller's `Authorization: Basic` header; 200 authenticates, any other status
 * refuses (401). No answer within the timeout, or no connection, is `unavailable` (503).
 */
import { Agent, request } from 'undici';
import type { AuthUrlConfiguration } from './registry-config.ts';
import type { BasicCredentials, UserVerifier, Verdict } from './types.ts';
import { VerdictCache, cachedVerdict } from './verdict-cache.ts';
import type { VerdictStore } from './verdict-cache.ts';

export interface TlsMaterial {
  rejectUnauthorized?: boolean;
  ca?: string;
  cert?: string;
  key?: string;
}

/** Compiles an authentication URL registry; `version` changes whenever its configuration does. */
export function authUrlVerifier(
  registry: string,
  version: string,
  config: AuthUrlConfiguration,
  tls: TlsMaterial | undefined,
  cache: VerdictStore | undefined,
): UserVerifier {
  const timeoutMs = config.timeout * 1000;
  const dispatcher = new Agent({
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: tls
      ? { rejectUnauthorized: tls.rejectUnauthorized ?? true, ca: tls.ca, cert: tls.cert, key: tls.key }
      : undefined,
  });
  const call = async (credentials: BasicCredentials): Promise<Verdict> => {
    try {
      const answer = await request(config.url, {
        method: 'GET',
        headers: { authorization: credentials.header },
        dispatcher,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await answer.body.dump();
      return answer.statusCode === 200
        ? { outcome: 'authenticated', user: credentials.username }
        : { outcome: 'refused' };
    } catch (error) {
      return { outcome: 'unavailable', reason: (error as Error).message };
    }
  };
  return {
    registry,
    verify: function authUrl(credentials) {
      return cachedVerdict(cache, VerdictCache.key(version, credentials.header), () => call(credentials));
    },
  };
}
