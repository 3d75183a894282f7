/**
 * A consumer's usage of a subscription, read from the analytics the console reads (the hourly
 * rollups, or the events for windows shorter than an hour): the portal needs no rate-limit
 * counter store. The gateway's counter stays the authority — these figures are what the
 * activity log recorded, so calls of an API whose activity log is off are not in them.
 */
import type { RateLimitDef } from '../../definitions/types.ts';
import { callsOverTime, subscriptionCallsSince } from '../../store/analytics.ts';
import type { PlanRow } from '../../store/schema.ts';
import type { ServiceContext } from '../service-context.ts';

export interface LimitUsage {
  limit: RateLimitDef;
  kind: 'rate' | 'burst';
  /** Start and end of the current window: fixed windows aligned to the epoch, as the gateway counts. */
  windowStart: number;
  windowEnd: number;
  used: number;
  left: number;
}

/** Calls used and left in the current window of each of the plan's limits (unlimited ones have none). */
export async function limitUsage(
  context: ServiceContext,
  subscriptionId: string,
  plan: PlanRow,
  now = Date.now(),
): Promise<LimitUsage[]> {
  const limits = [
    ...(JSON.parse(plan.rate_limits) as RateLimitDef[]).map((limit) => ({ limit, kind: 'rate' as const })),
    ...(JSON.parse(plan.burst_limits) as RateLimitDef[]).map((limit) => ({ limit, kind: 'burst' as const })),
  ].filter(({ limit }) => !limit.unlimited && limit.windowMs > 0);
  return Promise.all(
    limits.map(async ({ limit, kind }) => {
      const windowStart = Math.floor(now / limit.windowMs) * limit.windowMs;
      const used = await subscriptionCallsSince(context.store.db, subscriptionId, windowStart);
      return {
        limit,
        kind,
        windowStart,
        windowEnd: windowStart + limit.windowMs,
        used,
        left: Math.max(0, limit.count - used),
      };
    }),
  );
}

/** A subscription's calls (and errors) per bucket from `fromTs` to `toTs`, for its usage chart. */
export function usageOverTime(
  context: ServiceContext,
  subscriptionId: string,
  fromTs: number,
  toTs: number,
  bucketMs: number,
) {
  return callsOverTime(context.store.db, { subscriptionId, fromTs, toTs }, bucketMs);
}
