/** Plan limits in words, as a developer reads them: "100 requests per hour", "Unlimited". */
import type { RateLimitDef } from '../definitions/types.ts';
import type { PlanRow } from '../store/schema.ts';

const units: Array<[ms: number, singular: string, plural: string]> = [
  [7 * 86_400_000, 'week', 'weeks'],
  [86_400_000, 'day', 'days'],
  [3_600_000, 'hour', 'hours'],
  [60_000, 'minute', 'minutes'],
  [1000, 'second', 'seconds'],
];

/** "hour", "5 minutes", "1500 milliseconds". */
export function windowInWords(windowMs: number): string {
  for (const [ms, singular, plural] of units) {
    if (windowMs % ms === 0) {
      const n = windowMs / ms;
      return n === 1 ? singular : `${n} ${plural}`;
    }
  }
  return `${windowMs} milliseconds`;
}

/** One limit in words: "100 requests per hour" or "Unlimited". */
export function limitInWords(limit: RateLimitDef): string {
  if (limit.unlimited) return 'Unlimited';
  return `${limit.count} ${limit.count === 1 ? 'request' : 'requests'} per ${windowInWords(limit.windowMs)}`;
}

/** The plan's rate limits in words; a plan without limits is "Unlimited". */
export function planLimitsInWords(plan: PlanRow): { rate: string[]; burst: string[] } {
  const rate = (JSON.parse(plan.rate_limits) as RateLimitDef[]).map(limitInWords);
  const burst = (JSON.parse(plan.burst_limits) as RateLimitDef[]).map(limitInWords);
  return { rate: rate.length > 0 ? rate : ['Unlimited'], burst };
}

/** "Approval required" or "No approval needed". */
export function approvalInWords(plan: PlanRow): string {
  return plan.approval === 1 ? 'Approval required' : 'No approval needed';
}
