/**
 * One way to turn per-rule window counts into a LimitDecision, shared by every counter store so
 * that memory and Redis answer identically.
 *
 * Counting semantics (check-then-count): a hit is rejected when, for some hard rule, the window
 * already holds `limit` hits; a rejected hit is counted against no rule. An admitted hit is
 * counted against every rule, soft ones included, and a soft rule over its limit only reports.
 */

import type { LimitDecision, LimitRule, RuleResult } from './types.ts';

/**
 * Builds the decision for one hit. `counts[i]` and `resetsMs[i]` belong to `rules[i]`; when
 * `blocked` is true the counts are those found before the (uncounted) hit.
 */
export function buildDecision(
  rules: readonly LimitRule[],
  counts: ArrayLike<number>,
  resetsMs: ArrayLike<number>,
  blocked: boolean,
): LimitDecision {
  const results: RuleResult[] = new Array(rules.length);
  let retryAfterMs = 0;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i];
    const count = counts[i];
    const resetMs = resetsMs[i];
    // Blocked: the attempted hit would have been count + 1, so `count >= limit` is over.
    const exceeded = blocked ? count >= rule.limit : count > rule.limit;
    if (blocked && exceeded && rule.hard && resetMs > retryAfterMs) retryAfterMs = resetMs;
    results[i] = { rule, count, remaining: rule.limit > count ? rule.limit - count : 0, resetMs, exceeded };
  }
  if (!blocked) return { allowed: true, results, rules };
  return { allowed: false, results, rules, retryAfterSeconds: toDelaySeconds(retryAfterMs) };
}

/**
 * Decision when the backend failed: admit or reject per the fail-open setting. No counts are
 * known, so no rule results are reported (the response then carries no quota headers).
 */
export function backendFailureDecision(
  rules: readonly LimitRule[],
  failOpen: boolean,
  backendError: string,
): LimitDecision {
  if (failOpen) return { allowed: true, results: [], rules, backendError };
  return { allowed: false, results: [], rules, backendError, retryAfterSeconds: 1 };
}

/** Milliseconds → whole seconds for `Retry-After`/`t`, rounded up and at least 1 (RFC 9110 §10.2.3 delay-seconds). */
export function toDelaySeconds(ms: number): number {
  const seconds = Math.ceil(ms / 1000);
  return seconds > 0 ? seconds : 1;
}
