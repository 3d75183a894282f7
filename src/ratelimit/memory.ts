/**
 * In-process counter store: fixed windows aligned to the epoch (`floor(now / windowMs)`), one
 * bucket per key holding a slot per rule. A hit is a Map lookup plus a loop over the rules, with
 * no timer per key: windows roll over lazily on the next hit and a periodic, unref'd sweep drops
 * buckets whose every window has ended.
 *
 * `now` is the steady clock (steady-now.ts), not `Date.now()`: a slot starts afresh whenever the
 * window index differs, so on the wall clock a step back into the window before, or ahead into
 * the next, would each reopen a full window within the same real one.
 */

import { buildDecision } from './decision.ts';
import { steadyNow } from './steady-now.ts';
import type { CounterStore, LimitDecision, LimitRule } from './types.ts';

interface Bucket {
  /** The rule set the slots below belong to (identity; plans are compiled once per snapshot). */
  rules: readonly LimitRule[];
  windowIndex: Float64Array;
  counts: Float64Array;
  /** When the last of this bucket's windows ends; the sweep drops the bucket after it. */
  expiresAt: number;
}

export interface MemoryCounterStoreOptions {
  /** How often expired buckets are dropped. Default 60 s. */
  sweepIntervalMs?: number;
  /** A clock that never steps, for tests of window arithmetic. Default `steadyNow`. */
  now?: () => number;
}

/** Creates the in-process counter store (the embedded default; one gateway node only). */
export function createMemoryCounterStore(options: MemoryCounterStoreOptions = {}): CounterStore {
  const now = options.now ?? steadyNow;
  const buckets = new Map<string, Bucket>();
  // Scratch space reused across calls: the store is synchronous, so no hit sees another's values.
  let resets = new Float64Array(8);

  const sweep = setInterval(function sweepExpiredBuckets() {
    const t = now();
    for (const [key, bucket] of buckets) if (bucket.expiresAt <= t) buckets.delete(key);
  }, options.sweepIntervalMs ?? 60_000);
  sweep.unref();

  function hitSync(key: string, rules: readonly LimitRule[]): LimitDecision {
    if (rules.length === 0) return { allowed: true, results: [], rules };
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = newBucket(rules);
      buckets.set(key, bucket);
    } else if (bucket.rules !== rules) {
      bucket = rebindBucket(bucket, rules);
      buckets.set(key, bucket);
    }
    if (resets.length < rules.length) resets = new Float64Array(rules.length);

    const t = now();
    const { windowIndex, counts } = bucket;
    let blocked = false;
    let expiresAt = 0;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i];
      const index = Math.floor(t / rule.windowMs);
      if (windowIndex[i] !== index) {
        windowIndex[i] = index;
        counts[i] = 0;
      }
      const end = (index + 1) * rule.windowMs;
      resets[i] = end - t;
      if (end > expiresAt) expiresAt = end;
      if (rule.hard && counts[i] >= rule.limit) blocked = true;
    }
    if (!blocked) for (let i = 0; i < rules.length; i++) counts[i]++;
    bucket.expiresAt = expiresAt;
    return buildDecision(rules, counts, resets, blocked);
  }

  return {
    kind: 'memory',
    hitSync,
    hit(key, rules) {
      return Promise.resolve(hitSync(key, rules));
    },
    async close() {
      clearInterval(sweep);
      buckets.clear();
    },
  };
}

function newBucket(rules: readonly LimitRule[]): Bucket {
  return {
    rules,
    windowIndex: new Float64Array(rules.length).fill(-1),
    counts: new Float64Array(rules.length),
    expiresAt: 0,
  };
}

/**
 * A key met with another rule set (a republished plan gives a new array): keep the counts of
 * rules that are the same limit (same name and window), start the others afresh.
 */
function rebindBucket(old: Bucket, rules: readonly LimitRule[]): Bucket {
  const bucket = newBucket(rules);
  for (let i = 0; i < rules.length; i++) {
    const j = old.rules.findIndex((r) => r.name === rules[i].name && r.windowMs === rules[i].windowMs);
    if (j >= 0) {
      bucket.windowIndex[i] = old.windowIndex[j];
      bucket.counts[i] = old.counts[j];
    }
  }
  bucket.expiresAt = old.expiresAt;
  return bucket;
}
