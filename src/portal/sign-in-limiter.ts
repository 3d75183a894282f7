/**
 * Counts failed sign-in attempts per client address and account name, in memory: after
 * `max` failures within `windowMs` further attempts are refused until the oldest one ages
 * out (OWASP Authentication cheat sheet, "Protect against automated attacks").
 */

export interface SignInLimiterOptions {
  max: number;
  windowMs: number;
  /** Upper bound on tracked keys, so a flood of distinct names cannot grow memory without end. */
  maxKeys?: number;
}

/** Tracks failed sign-in attempts; `retryAfterSeconds` says when a blocked key may try again. */
export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly maxKeys: number;

  constructor(private readonly options: SignInLimiterOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  private recent(key: string, now: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((ts) => now - ts < this.options.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }

  /** Seconds to wait before `key` may try again; 0 when it may try now. */
  retryAfterSeconds(key: string, now = Date.now()): number {
    const recent = this.recent(key, now);
    if (recent.length < this.options.max) return 0;
    return Math.max(1, Math.ceil((recent[0] + this.options.windowMs - now) / 1000));
  }

  recordFailure(key: string, now = Date.now()): void {
    if (this.failures.size >= this.maxKeys && !this.failures.has(key)) this.sweep(now);
    const recent = this.recent(key, now);
    recent.push(now);
    this.failures.set(key, recent);
  }

  recordSuccess(key: string): void {
    this.failures.delete(key);
  }

  /** Drops aged-out keys; when still full, the oldest-inserted keys go first. */
  private sweep(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    for (const key of this.failures.keys()) {
      if (this.failures.size < this.maxKeys) break;
      this.failures.delete(key);
    }
  }
}
