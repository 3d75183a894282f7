/**
 * Bounded memory of positive registry answers, so a caller with the right password does not
 * cost a registry call per request. Keys are SHA-256 of (registry version, Authorization
 * value): the password is never kept in clear. Refusals are not remembered, so a password
 * changed or a user removed is refused at the next call; an accepted one stays accepted for
 * at most `ttlMs`.
 *
 * At most `maxEntries` entries in all, kept in one partition per tenant (the provider org that
 * owns the registry). When the cache is full, the entry that goes is the oldest of the largest
 * partition (the writer's own when it is one of the largest): a tenant whose registry accepts
 * everything, or a flood of distinct credentials against one tenant's API, churns that
 * tenant's entries only, never those of a tenant holding fewer. Each tenant that calls keeps
 * its fair share, `maxEntries` divided by the tenants holding entries, whatever the others send.
 */
import { createHash } from 'node:crypto';

export interface VerdictCacheOptions {
  ttlMs: number;
  maxEntries: number;
}

/** What a verifier reads and writes: one tenant's partition ({@link VerdictCache.partition}). */
export interface VerdictStore {
  get(key: string, at?: number): string | undefined;
  set(key: string, user: string, at?: number): void;
}

type Entry = { user: string; expires: number };

/**
 * The whole cache. It is read and written only through a partition: there is no shared default
 * one a caller could fall into by forgetting to name its tenant.
 */
export class VerdictCache {
  readonly #partitions = new Map<string, Map<string, Entry>>();
  /** Partition names by their entry count, and the largest count held: the eviction victim in O(1). */
  readonly #bySize = new Map<number, Set<string>>();
  #largest = 0;
  #size = 0;

  constructor(readonly options: VerdictCacheOptions) {}

  /** The cache key of one registry version and Authorization value. */
  static key(registryVersion: string, header: string): string {
    return createHash('sha256').update(registryVersion).update('\0').update(header).digest('hex');
  }

  /** One tenant's view of the cache: its entries compete with other tenants' only for a fair share. */
  partition(name: string): VerdictStore {
    return {
      get: (key, at) => this.read(name, key, at),
      set: (key, user, at) => this.write(name, key, user, at),
    };
  }

  get size(): number {
    return this.#size;
  }

  /** Entries one partition holds. */
  sizeOf(partition: string): number {
    return this.#partitions.get(partition)?.size ?? 0;
  }

  private read(name: string, key: string, at = Date.now()): string | undefined {
    const entry = this.#partitions.get(name)?.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires > at) return entry.user;
    this.remove(name, key);
    return undefined;
  }

  private write(name: string, key: string, user: string, at = Date.now()): void {
    if (this.options.ttlMs <= 0 || this.options.maxEntries <= 0) return;
    this.remove(name, key);
    while (this.#size >= this.options.maxEntries) this.evictFor(name);
    let entries = this.#partitions.get(name);
    if (entries === undefined) this.#partitions.set(name, (entries = new Map()));
    this.resize(name, entries.size, entries.size + 1);
    entries.set(key, { user, expires: at + this.options.ttlMs });
    this.#size++;
  }

  /** Drops the oldest entry of the largest partition, the writer's own when it is one of them. */
  private evictFor(writer: string): void {
    const largest = this.#bySize.get(this.#largest)!;
    const victim = largest.has(writer) ? writer : (largest.values().next().value as string);
    const oldest = this.#partitions.get(victim)!.keys().next().value as string;
    this.remove(victim, oldest);
  }

  private remove(name: string, key: string): void {
    const entries = this.#partitions.get(name);
    if (entries === undefined || !entries.delete(key)) return;
    this.#size--;
    this.resize(name, entries.size + 1, entries.size);
    if (entries.size === 0) this.#partitions.delete(name);
  }

  /** Moves a partition between size buckets; the largest size moves down only by one, with it. */
  private resize(name: string, from: number, to: number): void {
    if (from > 0) {
      const bucket = this.#bySize.get(from)!;
      bucket.delete(name);
      if (bucket.size === 0) {
        this.#bySize.delete(from);
        if (from === this.#largest) this.#largest = to;
      }
    }
    if (to > 0) {
      const bucket = this.#bySize.get(to);
      if (bucket === undefined) this.#bySize.set(to, new Set([name]));
      else bucket.add(name);
    }
    if (to > this.#largest) this.#largest = to;
  }
}

/** Wraps a registry call with the cache: only `authenticated` answers are kept. */
export async function cachedVerdict<T extends { outcome: string; user?: string }>(
  cache: VerdictStore | undefined,
  key: string,
  call: () => Promise<T>,
): Promise<T | { outcome: 'authenticated'; user: string }> {
  const user = cache?.get(key);
  if (user !== undefined) return { outcome: 'authenticated', user };
  const verdict = await call();
  if (verdict.outcome === 'authenticated' && verdict.user !== undefined) cache?.set(key, verdict.user);
  return verdict;
}
