/**
 * Redis counter store, shared by every gateway node. Exact by construction (docs/rate-limits.md):
 *
 * - **Leases.** A node asks Redis for a batch of a key's remaining hits (one Lua script call
 *   checks and counts all of a plan's rules atomically) and admits calls from it locally; the
 *   batch shrinks with the window's remainder, and unused hits go back when the lease idles or
 *   its window ends. A hit is admitted only from a batch Redis already counted, so N gateways
 *   together never admit more than `limit` hits in a window of a hard rule.
 * - Windows are fixed and aligned on the Redis server's clock (`TIME`). A window's key is
 *   `<prefix>{<key>}:<rule name>:<windowMs>:<window index>`; it gets `PEXPIRE` when created.
 * - **Slow is not down.** A connected Redis that does not answer within `timeoutMs` gets the
 *   call rejected (never admitted uncounted). The request carries its deadline on Redis's clock
 *   and the script counts nothing past it, so a command that reaches Redis after its caller gave
 *   up charges nobody; a grant that still arrives late is kept as a lease for the next calls.
 * - **Clocks.** Deadlines are reckoned on the node's steady clock (steady-now.ts), which a
 *   wall-clock step does not move; the offset to Redis's clock is checked against the `TIME`
 *   each reply carries (redis-clock.ts), so a step of either clock costs no call. A lease ends
 *   when the steady or the wall clock says its window is over, whichever comes first (lease.ts).
 * - **Refusing is not down either.** An error reply from a connected Redis (OOM at maxmemory,
 *   READONLY after a failover, BUSY while a script runs, …) gets the call rejected too; the
 *   connection stays reachable. Such a reply counted nothing: BUSY runs no script, and the grant
 *   script reads every key before its first write (OOM and READONLY refuse only a first write).
 * - **Down** (no connection): the `failOpen` decision, logged once per outage, on /metrics.
 * - `{<key>}` is a Cluster hash tag: every key one hit touches lives in the same slot.
 * - Scripts go through ioredis' `defineCommand` (`EVALSHA`, `EVAL` on `NOSCRIPT`).
 *
 * Parts: redis-scripts.ts (the Lua), redis-connection.ts (connection options, health, metrics),
 * redis-clock.ts (Redis's clock), redis-lease-book.ts (leases per key, give-backs); this file
 * decides calls.
 */

import { ReplyError } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { backendFailureDecision } from './decision.ts';
import { blockedFromReply, canTake, leaseFromReply, takeFromLease, unused } from './lease.ts';
import type { Lease } from './lease.ts';
import { RedisClock } from './redis-clock.ts';
import {
  RedisHealth,
  connect,
  errorRejections,
  leaseRequests,
  outageDecisions,
  settledOnce,
  slowRejections,
} from './redis-connection.ts';
import type { CounterStoreLogger } from './redis-connection.ts';
import { LeaseBook, rejectWaiting } from './redis-lease-book.ts';
import type { KeyState } from './redis-lease-book.ts';
import { defineScripts, ruleCompiler } from './redis-scripts.ts';
import { steadyNow } from './steady-now.ts';
import type { CounterStore, LimitDecision, LimitRule } from './types.ts';

export type { CounterStoreLogger } from './redis-connection.ts';

export interface RedisCounterStoreOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…` (TLS). With `cluster`, the seed node. */
  url: string;
  /** When Redis is unreachable: admit (true, default) or reject (false); either way `backendError` is set. */
  failOpen?: boolean;
  logger?: CounterStoreLogger;
  /** Prefix of every key the store writes. Default `portico:rl:`. */
  keyPrefix?: string;
  /** How long a call waits for Redis's answer before it is rejected. Default 500 ms. */
  timeoutMs?: number;
  /** Most hits one lease takes; 1 = one round trip per call. Default 20. */
  leaseMax?: number;
  /** A lease unused this long gives its hits back. Default 1000 ms. */
  leaseIdleMs?: number;
  /** Talk to a Redis Cluster, discovering it from the node in `url`. */
  cluster?: boolean;
  /**
   * Extra ioredis options, merged under the store's own (timeouts, offline queue). Sentinel:
   * `{ sentinels: [{ host, port }], name: 'mymaster' }`.
   */
  redisOptions?: RedisOptions;
  /** The node's clock for deadlines and leases, one that never steps. Default `steadyNow`. */
  now?: () => number;
}

/** Creates the Redis counter store (scaled-out gateways share its counters). */
export function createRedisCounterStore(options: RedisCounterStoreOptions): CounterStore {
  const failOpen = options.failOpen ?? true;
  const timeoutMs = options.timeoutMs ?? 500;
  const leaseMax = String(Math.max(1, options.leaseMax ?? 20));
  const leaseIdleMs = options.leaseIdleMs ?? 1000;
  const keyPrefix = options.keyPrefix ?? 'portico:rl:';
  const clock = options.now ?? steadyNow;
  const client = connect(options.url, timeoutMs, options);
  const scripts = defineScripts(client);
  const compile = ruleCompiler();
  const health = new RedisHealth(client, failOpen, timeoutMs, options.logger);
  const redisClock = new RedisClock(clock);
  client.on('ready', () => void redisClock.measure(client));
  const book = new LeaseBook({
    scripts,
    compile,
    keyPrefix,
    idleMs: leaseIdleMs,
    isReady: () => client.status === 'ready',
    now: clock,
  });
  const grantsInFlight = new Set<Promise<unknown>>();

  // Hits made while the very first connection is being set up wait for it (bounded); later
  // outages fail fast, since the offline queue is off.
  let firstConnection: Promise<void> | undefined = settledOnce(client, Math.max(timeoutMs * 5, 1000)).then(() => {
    firstConnection = undefined;
  });

  const sweep = setInterval(() => book.sweepIdle(), leaseIdleMs);
  sweep.unref();

  /**
   * Admits one call from `lease` and, once half of it is used, asks for the next batch ahead of
   * need. A batch of 1 (a hard rule's last hits, or `leaseMax` 1) is not refilled ahead: that
   * would hold a second hit of the few left.
   */
  function take(key: string, state: KeyState, lease: Lease, now: number): LimitDecision {
    const decision = takeFromLease(lease, now);
    const refill = lease.granted > 1 && unused(lease) * 2 <= lease.granted;
    if (refill && !state.inFlight && state.next === undefined && client.status === 'ready') {
      requestLease(key, state, lease.rules);
    }
    return decision;
  }

  function unreachable(rules: readonly LimitRule[]): LimitDecision {
    const reason = `connection is ${client.status}` + (health.lastError === '' ? '' : ` (${health.lastError})`);
    health.down(reason);
    outageDecisions.inc({ decision: failOpen ? 'admitted' : 'rejected' });
    return backendFailureDecision(rules, failOpen, `redis: ${reason}`);
  }

  /** Rejects the waiting calls after an error reply from a connected Redis (nothing was counted). */
  function refused(state: KeyState, message: string): void {
    health.refused(message);
    const backendError = `redis: connected but refused the command (${message})`;
    for (const waiter of state.waiters.splice(0)) {
      errorRejections.inc();
      waiter.resolve({ allowed: false, results: [], rules: waiter.rules, backendError, retryAfterSeconds: 1 });
    }
  }

  /** Admits waiting calls from the leases, in order; asks Redis for another when some are left. */
  function serve(key: string, state: KeyState): void {
    const now = clock();
    while (state.waiters.length > 0) {
      const lease = book.usableLease(key, state, state.waiters[0].rules, now);
      if (lease === undefined) break;
      state.waiters.shift()!.resolve(take(key, state, lease, now));
    }
    if (state.waiters.length > 0 && !state.inFlight) requestLease(key, state, state.waiters[0].rules);
  }

  /**
   * One round trip for a batch of `rules`' hits. Called for waiting calls, or ahead of need (no
   * call waits yet); calls that arrive meanwhile wait for it, never longer than `timeoutMs`.
   */
  function requestLease(key: string, state: KeyState, rules: readonly LimitRule[]): void {
    if (client.status !== 'ready') {
      const decision = unreachable(rules);
      for (const waiter of state.waiters.splice(0)) waiter.resolve({ ...decision, rules: waiter.rules });
      return;
    }
    const now = clock();
    // Leases of another rule set (a republished plan) or of an ended window are of no more use.
    if (state.lease !== undefined && !canTake(state.lease, rules, now)) book.giveBack(key, state.lease);
    if (state.next !== undefined && !canTake(state.next, rules, now)) {
      book.giveBack(key, state.next);
      state.next = undefined;
    }
    const { keySuffixes, argv } = compile(rules);
    const base = keyPrefix + '{' + key;
    const giveUpAt = now + timeoutMs;
    const windowKeys = keySuffixes.map((suffix) => base + suffix);
    state.inFlight = true;
    leaseRequests.inc();
    let settled = false;
    // A timer that fires after a stalled event loop runs before the socket is read: let the
    // poll phase read a reply already there before giving up on it.
    const timer = setTimeout(() => setImmediate(() => settled || giveUp()), timeoutMs);
    const giveUp = () => {
      settled = true;
      state.inFlight = false;
      health.slowed();
      const backendError = `redis: no answer within ${timeoutMs} ms`;
      for (const waiter of state.waiters.splice(0)) {
        slowRejections.inc();
        waiter.resolve({
          allowed: false,
          results: [],
          rules: waiter.rules,
          backendError,
          retryAfterSeconds: 1,
        });
      }
    };
    // The caller's deadline goes on Redis's clock as last reckoned. A reply past it that shows the
    // reckoning stale (a clock stepped) counted nothing, and is asked again once: a step costs no call.
    const ask = (mayAskAgain: boolean): Promise<void> => {
      const askedAt = clock();
      const wallAskedAt = Date.now();
      return scripts.grant(windowKeys, redisClock.toRedis(giveUpAt), leaseMax, argv).then(
        (reply) => {
          const stepped = redisClock.observe(reply[1], askedAt, clock());
          if (reply[0] === -1 && stepped && mayAskAgain && !settled) return ask(false);
          clearTimeout(timer);
          if (reply[0] === -1) {
            if (!settled) giveUp();
            return;
          }
          health.up();
          health.counting();
          const late = settled;
          settled = true;
          state.inFlight = false;
          if (!late) health.prompt();
          const lease = leaseFromReply(rules, reply, askedAt, wallAskedAt);
          if (lease !== undefined) book.place(key, state, lease);
          else if (!late) rejectWaiting(state, rules, blockedFromReply(rules, reply));
          serve(key, state);
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          state.inFlight = false;
          if (err instanceof ReplyError) {
            // Redis is up and answered: not an outage, so never the failOpen decision.
            refused(state, (err as Error).message);
            return;
          }
          health.lastError = err instanceof Error ? err.message : String(err);
          health.down(health.lastError);
          if (state.waiters.length === 0) return;
          outageDecisions.inc({ decision: failOpen ? 'admitted' : 'rejected' });
          const decision = backendFailureDecision(rules, failOpen, `redis: ${health.lastError}`);
          for (const waiter of state.waiters.splice(0)) waiter.resolve({ ...decision, rules: waiter.rules });
        },
      );
    };
    const done = ask(true);
    grantsInFlight.add(done);
    void done.then(() => grantsInFlight.delete(done));
  }

  /** Waits up to the deadline for the connection being set up; then counts, or rejects as slow. */
  async function afterConnecting(key: string, rules: readonly LimitRule[]): Promise<LimitDecision> {
    await settledOnce(client, timeoutMs);
    if (client.status === 'ready' || health.lastError !== '') return hit(key, rules);
    health.slowed();
    slowRejections.inc();
    const backendError = `redis: connection still being set up after ${timeoutMs} ms`;
    return { allowed: false, results: [], rules, backendError, retryAfterSeconds: 1 };
  }

  async function hit(key: string, rules: readonly LimitRule[]): Promise<LimitDecision> {
    if (rules.length === 0) return { allowed: true, results: [], rules };
    if (firstConnection !== undefined) await firstConnection;
    const state = book.stateOf(key);
    const now = clock();
    const lease = state.waiters.length === 0 ? book.usableLease(key, state, rules, now) : undefined;
    if (lease !== undefined) return take(key, state, lease, now);
    if (client.status !== 'ready' && !state.inFlight) {
      // Still setting up a connection that has not failed (a node just started on a busy
      // machine): a slow answer, not an outage, so it is never admitted uncounted.
      if (health.lastError === '') return afterConnecting(key, rules);
      return unreachable(rules);
    }
    const waiting = state;
    return new Promise((resolve) => {
      waiting.waiters.push({ rules, resolve });
      if (!waiting.inFlight) requestLease(key, waiting, rules);
    });
  }

  return {
    kind: 'redis',
    hit,
    health: () => ({ backend: 'redis', reachable: health.healthy, answeringInTime: !health.slow, failOpen }),
    async close() {
      clearInterval(sweep);
      // A batch on its way is already counted in Redis: wait for it (bounded) so it goes back too.
      const waited = Promise.all(grantsInFlight);
      await Promise.race([waited, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
      await book.returnAll();
      if (client.status === 'ready') {
        await client.quit().catch(() => client.disconnect());
      } else {
        client.disconnect();
      }
    },
  };
}
