/**
 * The Redis counter store's lease book: per key, the batch calls are served from, the next
 * batch, the calls waiting and whether a round trip is in flight; and the way unused hits go
 * back to the exact windows they were taken from (docs/rate-limits.md, "Leases").
 */
import { canTake, unused } from './lease.ts';
import type { Lease } from './lease.ts';
import type { CompiledRules, CounterScripts } from './redis-scripts.ts';
import type { LimitDecision, LimitRule } from './types.ts';

/** A call waiting for a lease. */
export interface Waiter {
  rules: readonly LimitRule[];
  resolve(decision: LimitDecision): void;
}

/**
 * One key's state on this node: the lease calls are served from, the next one (requested when
 * the current one was half used, so a busy key rarely waits for a round trip), the calls
 * waiting, the round trip in flight (at most one per key).
 */
export interface KeyState {
  lease: Lease | undefined;
  next: Lease | undefined;
  waiters: Waiter[];
  inFlight: boolean;
}

export interface LeaseBookOptions {
  scripts: CounterScripts;
  compile(rules: readonly LimitRule[]): CompiledRules;
  keyPrefix: string;
  /** A lease unused this long gives its hits back. */
  idleMs: number;
  /** Whether the connection can take a command now (give-backs are not queued). */
  isReady(): boolean;
  /** The store's steady clock, which lease ends and idle times are on. */
  now(): number;
}

export class LeaseBook {
  readonly keys = new Map<string, KeyState>();
  private readonly givingBack = new Set<Promise<unknown>>();

  constructor(private readonly options: LeaseBookOptions) {}

  /** The key's state, created empty on first use. */
  stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { lease: undefined, next: undefined, waiters: [], inFlight: false };
      this.keys.set(key, state);
    }
    return state;
  }

  /** Returns a lease's unused hits to the windows it took them from (those that ended are harmless). */
  giveBack(key: string, lease: Lease): void {
    const left = unused(lease);
    lease.used = lease.granted;
    if (left <= 0 || !this.options.isReady()) return;
    const { keySuffixes } = this.options.compile(lease.rules);
    const prefix = this.options.keyPrefix;
    const windowKeys = keySuffixes.map((suffix, i) => `${prefix}{${key}${suffix}:${lease.windows[i]}`);
    const done = this.options.scripts.giveBack(windowKeys, left).catch(() => undefined);
    this.givingBack.add(done);
    void done.then(() => this.givingBack.delete(done));
  }

  giveBackAll(key: string, state: KeyState): void {
    if (state.lease !== undefined) this.giveBack(key, state.lease);
    if (state.next !== undefined) this.giveBack(key, state.next);
    state.lease = undefined;
    state.next = undefined;
  }

  /** The lease a call of `rules` is admitted from: the current one, else the next one (which becomes current). */
  usableLease(key: string, state: KeyState, rules: readonly LimitRule[], now: number): Lease | undefined {
    if (canTake(state.lease, rules, now)) return state.lease;
    if (!canTake(state.next, rules, now)) return undefined;
    if (state.lease !== undefined) this.giveBack(key, state.lease);
    state.lease = state.next;
    state.next = undefined;
    return state.lease;
  }

  /** Where a granted lease goes: current when the current one is spent, else next, else back to Redis. */
  place(key: string, state: KeyState, lease: Lease): void {
    if (this.keys.get(key) !== state) {
      // Swept or closed while the grant was on its way: the hits go straight back.
      this.giveBack(key, lease);
    } else if (!canTake(state.lease, lease.rules, this.options.now())) {
      if (state.lease !== undefined) this.giveBack(key, state.lease);
      state.lease = lease;
    } else if (state.next === undefined) {
      state.next = lease;
    } else {
      this.giveBack(key, lease);
    }
  }

  /** Gives back the leases of keys with nothing waiting or in flight and no lease in use; forgets those keys. */
  sweepIdle(): void {
    const now = this.options.now();
    for (const [key, state] of this.keys) {
      if (state.inFlight || state.waiters.length > 0) continue;
      if (this.inUse(state.lease, now) || this.inUse(state.next, now)) continue;
      this.giveBackAll(key, state);
      this.keys.delete(key);
    }
  }

  /** Gives back every lease (at close) and waits for the give-backs. */
  async returnAll(): Promise<void> {
    for (const [key, state] of this.keys) this.giveBackAll(key, state);
    this.keys.clear();
    await Promise.all(this.givingBack);
  }

  /** Whether a lease still has hits for calls: used lately, its windows not over. */
  private inUse(lease: Lease | undefined, now: number): boolean {
    return (
      lease !== undefined && now - lease.lastUsed < this.options.idleMs && now < lease.expiresAt && unused(lease) > 0
    );
  }
}

/** Rejects the waiting calls of `rules` with a blocked decision; calls of another rule set stay. */
export function rejectWaiting(state: KeyState, rules: readonly LimitRule[], decision: LimitDecision): void {
  const others: Waiter[] = [];
  for (const waiter of state.waiters) {
    if (waiter.rules === rules) waiter.resolve(decision);
    else others.push(waiter);
  }
  state.waiters = others;
}
