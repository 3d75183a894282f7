/**
 * RFC 7662 token introspection against a third-party OAuth provider, with a bounded cache of
 * positive answers. An answer is kept no longer than the token's `exp` and the configured
 * ceiling (a revoked token is accepted at most that long); negative answers are not kept, so a
 * token that becomes active is seen at once. Concurrent look-ups of one token share one call.
 */
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { fetchJson } from '../../policies/fetch-json.ts';

/** Settings of every introspection client (gateway settings, docs/configuration.md). */
export interface IntrospectionSettings {
  /** Deadline of one introspection call. */
  timeoutMs: number;
  /** Ceiling on how long a positive answer is reused (0 = every call asks). */
  cacheMs: number;
  /** Most answers kept per introspection endpoint; the oldest go first. */
  cacheEntries: number;
}

/** What the provider said about a token. */
export type TokenInfo =
  | { active: false }
  | {
      active: true;
      scopes: readonly string[];
      clientId: string | undefined;
      /** Seconds since the epoch, as RFC 7662 writes it. */
      exp: number | undefined;
      claims: Readonly<Record<string, unknown>>;
    };

export interface IntrospectorOptions {
  url: string;
  /** `Authorization` sent to the provider (the API property `x-introspect-basic-authorization-header`). */
  authorization: string | undefined;
  dispatcher: Dispatcher;
  settings: IntrospectionSettings;
}

// An answer larger than this is not an introspection answer.
const maxAnswerBytes = 64 * 1024;
const inactive: TokenInfo = Object.freeze({ active: false });

/** One introspection endpoint: the call, its cache and its in-flight calls. */
export class Introspector {
  private readonly url: URL;
  private readonly cache = new Map<string, { info: TokenInfo; until: number }>();
  private readonly pending = new Map<string, Promise<TokenInfo | 'unavailable'>>();

  constructor(private readonly options: IntrospectorOptions) {
    this.url = new URL(options.url);
  }

  /** The token's state: cached when a positive answer is still fresh, else asked for. */
  lookup(
    token: string,
    forwarded: Record<string, string>,
  ): TokenInfo | 'unavailable' | Promise<TokenInfo | 'unavailable'> {
    const key = cacheKey(token, forwarded);
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      if (cached.until > Date.now()) return cached.info;
      this.cache.delete(key);
    }
    let call = this.pending.get(key);
    if (call === undefined) {
      call = this.ask(token, forwarded, key).finally(() => this.pending.delete(key));
      this.pending.set(key, call);
    }
    return call;
  }

  private async ask(token: string, forwarded: Record<string, string>, key: string): Promise<TokenInfo | 'unavailable'> {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      ...forwarded,
    };
    if (this.options.authorization !== undefined) headers.authorization = this.options.authorization;
    // RFC 7662 §2.1: POST, form-encoded `token`, with a hint that it is an access token.
    const body = new URLSearchParams({ token, token_type_hint: 'access_token' }).toString();
    let answer;
    try {
      const { timeoutMs } = this.options.settings;
      answer = await fetchJson(this.url, this.options.dispatcher, {
        method: 'POST',
        headers,
        body,
        timeoutMs,
        maxBytes: maxAnswerBytes,
      });
    } catch {
      return 'unavailable';
    }
    const info = answer.status === 200 ? tokenInfo(answer.value) : undefined;
    if (info === undefined) return 'unavailable';
    if (info.active) this.remember(key, info);
    return info;
  }

  private remember(key: string, info: TokenInfo & { active: true }): void {
    const { cacheMs, cacheEntries } = this.options.settings;
    const now = Date.now();
    const until = Math.min(now + cacheMs, info.exp === undefined ? Infinity : info.exp * 1000);
    if (until <= now || cacheEntries === 0) return;
    while (this.cache.size >= cacheEntries) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, { info, until });
  }

  /** Answers cached now (for tests and metrics). */
  get cachedAnswers(): number {
    return this.cache.size;
  }
}

// Tokens are kept hashed: a heap dump of the gateway does not hold usable bearer tokens.
function cacheKey(token: string, forwarded: Record<string, string>): string {
  const hash = createHash('sha256').update(token);
  for (const [name, value] of Object.entries(forwarded)) hash.update(`\n${name}:${value}`);
  return hash.digest('base64url');
}

/** Reads an RFC 7662 §2.2 answer; `undefined` when it is not one (no boolean `active`). */
export function tokenInfo(value: unknown): TokenInfo | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const answer = value as Record<string, unknown>;
  if (typeof answer.active !== 'boolean') return undefined;
  if (!answer.active) return inactive;
  const exp = typeof answer.exp === 'number' && Number.isFinite(answer.exp) ? answer.exp : undefined;
  // An active answer for a token past its exp is treated as inactive (clock of the provider aside).
  if (exp !== undefined && exp * 1000 <= Date.now()) return inactive;
  const scopes = typeof answer.scope === 'string' ? answer.scope.split(' ').filter((scope) => scope !== '') : [];
  const clientId = typeof answer.client_id === 'string' && answer.client_id !== '' ? answer.client_id : undefined;
  return { active: true, scopes, clientId, exp, claims: Object.freeze({ ...answer }) };
}
