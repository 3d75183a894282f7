/**
 * Rate-limit counters behind one narrow interface (Kong's `local`/`redis` policies). A counter
 * store counts hits per key in fixed windows; the plan limiter on top decides admit/reject
 * and produces the response headers.
 */

export interface LimitRule {
  /** The limit's name as the plan has it (`default`, or a burst limit's name). */
  name: string;
  /** Hits allowed per window. */
  limit: number;
  windowMs: number;
  /** A hard limit rejects over-limit calls; a soft one only reports (burst limits are always hard). */
  hard: boolean;
}

export interface RuleResult {
  rule: LimitRule;
  /**
   * Hits counted in the current window, this one included when it was admitted. A hit rejected
   * by a hard rule is not counted (check-then-count), so on a rejection this is the count that
   * blocked it.
   */
  count: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  exceeded: boolean;
}

export interface LimitDecision {
  allowed: boolean;
  results: RuleResult[];
  /** Seconds to wait before retrying, when rejected. */
  retryAfterSeconds?: number;
  /** Set when the counter backend failed and the fail-open/closed setting decided. */
  backendError?: string;
  /** The rule set this decision was made against (the array given to `hit`), for per-rule-set caches. */
  rules?: readonly LimitRule[];
}

export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  /**
   * Counts one hit for `key` against each rule (one fixed window per rule) atomically, and
   * reports the counts. Over-limit hits on hard rules must not be counted against later windows.
   */
  hit(key: string, rules: readonly LimitRule[]): Promise<LimitDecision>;
  /** Synchronous `hit`, offered by in-process backends (memory) for the gateway's fast path. */
  hitSync?(key: string, rules: readonly LimitRule[]): LimitDecision;
  /** Facts for the gateway's `/ready` (e.g. whether Redis is reachable), from backends that have any. */
  health?(): Record<string, unknown>;
  close(): Promise<void>;
}
