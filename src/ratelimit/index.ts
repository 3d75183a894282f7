/**
 * Rate-limit counters: pick the backend from the settings, and turn a plan's limits into rules.
 */

import { createMemoryCounterStore } from './memory.ts';
import { createRedisCounterStore } from './redis.ts';
import type { CounterStoreLogger } from './redis.ts';
import type { CounterStore, LimitRule } from './types.ts';

export type { CounterStore, LimitDecision, LimitRule, RuleResult } from './types.ts';
export type { CounterStoreLogger } from './redis.ts';
export { createMemoryCounterStore } from './memory.ts';
export { createRedisCounterStore } from './redis.ts';
export { rateLimitHeaders } from './headers.ts';

export interface CounterStoreSettings {
  /** `PORTICO_REDIS_URL`; absent → in-process memory counters (one gateway node). */
  redisUrl?: string;
  /** When Redis fails: admit (true) or reject (false). */
  failOpen: boolean;
  logger?: CounterStoreLogger;
  keyPrefix?: string;
  /** `PORTICO_RATELIMIT_TIMEOUT_MS`: how long a call waits for Redis before it is rejected. */
  timeoutMs?: number;
  /** `PORTICO_RATELIMIT_LEASE_MAX`: most hits one Redis round trip takes for a node. */
  leaseMax?: number;
}

/** Creates the counter store the settings call for: Redis when a URL is given, memory otherwise. */
export function createCounterStore(settings: CounterStoreSettings): CounterStore {
  if (settings.redisUrl === undefined || settings.redisUrl === '') return createMemoryCounterStore();
  return createRedisCounterStore({
    url: settings.redisUrl,
    failOpen: settings.failOpen,
    logger: settings.logger,
    keyPrefix: settings.keyPrefix,
    timeoutMs: settings.timeoutMs,
    leaseMax: settings.leaseMax,
  });
}

/** A plan limit as the product definition gives it (the fields of `RateLimitDef` used here). */
export interface PlanLimit {
  name: string;
  unlimited: boolean;
  count: number;
  windowMs: number;
  hardLimit: boolean;
}

/**
 * A plan's rate limits and burst limits as counter rules: unlimited limits dropped, burst limits
 * always hard ("Burst limits are always hard", IBM "Understanding rate limits for APIs and
 * Plans"). Call once per plan when the snapshot is compiled: stores and header formatting cache
 * per rule-set identity.
 */
export function rulesFromPlan(
  rateLimits: readonly PlanLimit[],
  burstLimits: readonly PlanLimit[] = [],
): readonly LimitRule[] {
  const rules: LimitRule[] = [];
  for (const limit of rateLimits) {
    if (!limit.unlimited)
      rules.push(
        Object.freeze({
          name: limit.name,
          limit: limit.count,
          windowMs: limit.windowMs,
          hard: limit.hardLimit,
        }),
      );
  }
  for (const limit of burstLimits) {
    if (!limit.unlimited)
      rules.push(Object.freeze({ name: limit.name, limit: limit.count, windowMs: limit.windowMs, hard: true }));
  }
  return Object.freeze(rules);
}
