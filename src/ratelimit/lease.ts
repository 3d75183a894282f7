/**
 * Quota leases: the local half of the Redis counter store's batching (docs/rate-limits.md,
 * "Leases"). Redis grants a node a batch of a key's remaining hits in one atomic step (the
 * batch is already counted in Redis); the node admits calls from it without a round trip, and
 * gives back what it did not use. Since every hit a node admits was counted in Redis before,
 * N nodes together never admit more than a hard rule's limit, whatever the timing.
 */
import { buildDecision } from './decision.ts';
import type { LimitDecision, LimitRule } from './types.ts';

/** A batch of hits granted to this node for one key and rule set. */
export interface Lease {
  readonly rules: readonly LimitRule[];
  readonly granted: number;
  used: number;
  /** Per rule: the window's count in Redis right after the grant (the whole batch included). */
  readonly countsAfter: readonly number[];
  /** Per rule: when its window ends on the node's steady clock, reckoned from before the request left (never late). */
  readonly resetAt: readonly number[];
  /** Per rule: the window index, which names the exact key when unused hits go back. */
  readonly windows: readonly number[];
  /** When the first of its windows ends, on the steady clock: no hit is taken from the lease after it. */
  readonly expiresAt: number;
  /**
   * The same end on the wall clock. The lease ends when either clock reaches its end: each can
   * lag real time, in different cases (the steady clock over a host suspend, the wall clock
   * after a step back), and a lease used late admits hits counted in a window already over.
   */
  readonly wallExpiresAt: number;
  lastUsed: number;
}

/**
 * The lease in a grant reply `{ granted, now, count_1, reset_1, window_1, … }`, for a request
 * sent at `sentAt` on the node's steady clock, `wallSentAt` on its wall clock. Undefined when
 * nothing was granted.
 */
export function leaseFromReply(
  rules: readonly LimitRule[],
  reply: readonly number[],
  sentAt: number,
  wallSentAt: number,
): Lease | undefined {
  const granted = reply[0];
  if (granted <= 0) return undefined;
  const countsAfter: number[] = [];
  const resetAt: number[] = [];
  const windows: number[] = [];
  let expiresAt = Infinity;
  for (let i = 0; i < rules.length; i++) {
    countsAfter.push(reply[i * 3 + 2]);
    resetAt.push(sentAt + reply[i * 3 + 3]);
    windows.push(reply[i * 3 + 4]);
    if (resetAt[i] < expiresAt) expiresAt = resetAt[i];
  }
  const wallExpiresAt = wallSentAt + (expiresAt - sentAt);
  return { rules, granted, used: 0, countsAfter, resetAt, windows, expiresAt, wallExpiresAt, lastUsed: sentAt };
}

/** The decision of a grant reply that granted nothing: a hard rule is at its limit. */
export function blockedFromReply(rules: readonly LimitRule[], reply: readonly number[]): LimitDecision {
  const counts = new Array<number>(rules.length);
  const resets = new Array<number>(rules.length);
  for (let i = 0; i < rules.length; i++) {
    counts[i] = reply[i * 3 + 2];
    resets[i] = reply[i * 3 + 3];
  }
  return buildDecision(rules, counts, resets, true);
}

/** Hits of the lease not used yet. */
export function unused(lease: Lease): number {
  return lease.granted - lease.used;
}

/** Whether `rules` can be admitted from `lease` at `now` (steady clock). */
export function canTake(lease: Lease | undefined, rules: readonly LimitRule[], now: number): lease is Lease {
  return (
    lease !== undefined &&
    lease.rules === rules &&
    lease.used < lease.granted &&
    now < lease.expiresAt &&
    Date.now() < lease.wallExpiresAt
  );
}

/**
 * Admits one hit from the lease. Its count is the one it had in the batch: the count before
 * the grant plus its place in the batch, so one node's successive hits count 1, 2, 3…
 */
export function takeFromLease(lease: Lease, now: number): LimitDecision {
  lease.used++;
  lease.lastUsed = now;
  const n = lease.rules.length;
  const counts = new Array<number>(n);
  const resets = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    counts[i] = lease.countsAfter[i] - lease.granted + lease.used;
    resets[i] = Math.max(0, lease.resetAt[i] - now);
  }
  return buildDecision(lease.rules, counts, resets, false);
}
