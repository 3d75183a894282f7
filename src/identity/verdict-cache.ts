/**
 * Bounded memory of positive registry answers, so a caller with the right password does not
 * cost a registry call per request. Keys are SHA-256 of (registry version, Authorization
 * value): the password is never kept in clear. Refusals are not remembered, so a password
 * changed or a user removed is refused at the next call; an accepted one stays accepted for
 * at most `ttlMs`. At most `maxEntries` entries: the oldest goes first.
 */
import { createHash } from 'node:crypto';

export interface VerdictCacheOptions {
  ttlMs: number;
  maxEntries: number;
}

export class VerdictCache {
  readonly #entries = new Map<string, { user: string; expires: number }>();

  constructor(readonly options: VerdictCacheOptions) {}

  /** The cache key of one registry version and Authorization value. */
  static key(registryVersion: string, header: string): string {
    return createHash('sha256').update(registryVersion).update('\0').update(header).digest('hex');
  }

  /** The user a still-fresh positive answer named. */
  get(key: string, at = Date.now()): string | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires > at) return entry.user;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, user: string, at = Date.now()): void {
    if (this.options.ttlMs <= 0 || this.options.maxEntries <= 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.options.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { user, expires: at + this.options.ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Wraps a registry call with the cache: only `authenticated` answers are kept. */
export async function cachedVerdict<T extends { outcome: string; user?: string }>(
  cache: VerdictCache | undefined,
  key: string,
  call: () => Promise<T>,
): Promise<T | { outcome: 'authenticated'; user: string }> {
  const user = cache?.get(key);
  if (user !== undefined) return { outcome: 'authenticated', user };
  const verdict = await call();
  if (verdict.outcome === 'authenticated' && verdict.user !== undefined) cache?.set(key, verdict.user);
  return verdict;
}
