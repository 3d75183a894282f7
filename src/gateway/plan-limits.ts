/**
 * The plan-limit phase, after security and parameters (DESIGN §3.4): one hit per call against the
 * caller's plan limits (`100/1hour`, burst limits), counted per subscription and shared by every
 * operation of the plan. Every answer then carries `X-RateLimit-Limit`/`X-RateLimit-Remaining`
 * (API Connect) and `RateLimit-Policy`/`RateLimit` (IETF draft); over a hard limit is a 429 with
 * `Retry-After` in seconds until the blocking window resets (RFC 6585 §4, RFC 9110 §10.2.3).
 */
import { PorticoError } from '../errors.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { CounterStore, LimitDecision } from '../ratelimit/types.ts';
import type { SubscriptionInfo } from './subscriptions.ts';

/** Response fields, as `[name, value]` pairs. */
export type LimitHeaders = Array<[string, string]>;

/**
 * Counts the call against the subscription's plan. Returns the rate-limit headers every answer
 * carries (undefined for a caller without plan limits), without a promise when the counters are
 * in process.
 * @throws PorticoError `GW_RATE_LIMIT` (429) carrying the same headers and `Retry-After`.
 */
export function enforcePlanLimits(
  counters: CounterStore,
  subscription: SubscriptionInfo | undefined,
): LimitHeaders | undefined | Promise<LimitHeaders> {
  if (subscription === undefined || subscription.rules.length === 0) return undefined;
  // Plan limits are shared by every operation of the plan: one key per subscription.
  const key = `plan:${subscription.id}`;
  if (counters.hitSync) return limitHeadersOf(counters.hitSync(key, subscription.rules));
  return counters.hit(key, subscription.rules).then(limitHeadersOf);
}

function limitHeadersOf(decision: LimitDecision): LimitHeaders {
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) throw new PorticoError('GW_RATE_LIMIT', {}, { headers: Object.fromEntries(headers) });
  return headers;
}
