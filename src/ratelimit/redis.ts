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
 * - **Down** (no connection): the `failOpen` decision, logged once per outage, on /metrics.
 * - `{<key>}` is a Cluster hash tag: every key one hit touches lives in the same slot.
 * - Scripts go through ioredis' `defineCommand` (`EVALSHA`, `EVAL` on `NOSCRIPT`).
 */

import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';
import { backendFailureDecision } from './decision.ts';
import { blockedFromReply, canTake, leaseFromReply, takeFromLease, unused } from './lease.ts';
import type { Lease } from './lease.ts';
import type { CounterStore, LimitDecision, LimitRule } from './types.ts';

// Readable on /metrics: whether this node's counters reach Redis, and which way it fails.
const redisUp = new Gauge({
  name: 'portico_ratelimit_redis_up',
  help: '1 while rate-limit counters reach Redis; 0 during an outage (calls follow PORTICO_RATELIMIT_FAIL_OPEN)',
});
const failOpenGauge = new Gauge({
  name: 'portico_ratelimit_fail_open',
  help: '1 when calls are admitted while Redis is unreachable, 0 when they are rejected',
});
const slowRejections = new Counter({
  name: 'portico_ratelimit_slow_rejections_total',
  help: 'Calls rejected because Redis was connected but did not answer within PORTICO_RATELIMIT_TIMEOUT_MS',
});
const outageDecisions = new Counter({
  name: 'portico_ratelimit_unreachable_decisions_total',
  help: 'Calls decided by PORTICO_RATELIMIT_FAIL_OPEN because Redis was unreachable, by decision',
  labelNames: ['decision'],
});
const leaseRequests = new Counter({
  name: 'portico_ratelimit_lease_requests_total',
  help: 'Round trips to Redis for a batch of hits (one per batch, not per call)',
});

/** The slice of a logger the store uses (a pino logger fits). */
export type CounterStoreLogger = Pick<Logger, 'warn' | 'info'>;

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
}

/**
 * Grants a lease. KEYS[i]: the window key of rule i without its window index. ARGV[1]: the
 * caller's deadline in ms on Redis's clock (past it, nothing is counted: reply { -1 });
 * ARGV[2]: most hits to grant; then limit, windowMs, hard (1/0) per rule. A hard rule at its
 * limit blocks (granted 0, nothing counted); else the grant is at most 1/8 of the smallest hard
 * remainder (at least 1), so the batch shrinks as the window fills. Returns
 * { granted, count_1, resetMs_1, window_1, … } with the counts after the grant.
 */
const GRANT_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = tonumber(ARGV[1])
if deadline > 0 and now > deadline then return { -1 } end
local n = #KEYS
local keys, counts, resets, windows = {}, {}, {}, {}
local room = nil
for i = 1, n do
  local limit = tonumber(ARGV[i * 3])
  local windowMs = tonumber(ARGV[i * 3 + 1])
  windows[i] = math.floor(now / windowMs)
  keys[i] = KEYS[i] .. ':' .. string.format('%d', windows[i])
  counts[i] = tonumber(redis.call('GET', keys[i]) or '0')
  resets[i] = (windows[i] + 1) * windowMs - now
  if ARGV[i * 3 + 2] == '1' and (room == nil or limit - counts[i] < room) then room = limit - counts[i] end
end
local granted = tonumber(ARGV[2])
if room ~= nil then
  if room <= 0 then granted = 0 else granted = math.min(granted, math.max(1, math.floor(room / 8))) end
end
if granted > 0 then
  for i = 1, n do
    counts[i] = redis.call('INCRBY', keys[i], granted)
    if counts[i] == granted then redis.call('PEXPIRE', keys[i], resets[i] + 1000) end
  end
end
local reply = { granted }
for i = 1, n do
  reply[i * 3 - 1] = counts[i]
  reply[i * 3] = resets[i]
  reply[i * 3 + 1] = windows[i]
end
return reply
`;

/** Gives back unused hits. KEYS: exact window keys; ARGV[1]: hits. Never below 0, never creates a key. */
const GIVE_BACK_SCRIPT = `
local n = tonumber(ARGV[1])
for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count > 0 then redis.call('DECRBY', KEYS[i], math.min(n, count)) end
end
return 0
`;

const GRANT = 'porticoRateLimitGrant';
const GIVE_BACK = 'porticoRateLimitGiveBack';

type ScriptCommand = (numberOfKeys: number, ...args: string[]) => Promise<number[]>;

/** What is fixed per rule set: the key suffixes and the script's per-rule ARGV. */
interface CompiledRules {
  keySuffixes: string[];
  argv: string[];
}

/** A call waiting for a lease. */
interface Waiter {
  rules: readonly LimitRule[];
  resolve(decision: LimitDecision): void;
}

/**
 * One key's state on this node: the lease calls are served from, the next one (requested when
 * the current one was half used, so a busy key rarely waits for a round trip), the calls
 * waiting, the round trip in flight (at most one per key).
 */
interface KeyState {
  lease: Lease | undefined;
  next: Lease | undefined;
  waiters: Waiter[];
  inFlight: boolean;
}

/** Creates the Redis counter store (scaled-out gateways share its counters). */
export function createRedisCounterStore(options: RedisCounterStoreOptions): CounterStore {
  const failOpen = options.failOpen ?? true;
  const timeoutMs = options.timeoutMs ?? 500;
  const leaseMax = String(Math.max(1, options.leaseMax ?? 20));
  const leaseIdleMs = options.leaseIdleMs ?? 1000;
  const keyPrefix = options.keyPrefix ?? 'portico:rl:';
  const logger = options.logger;
  const client = connect(options.url, timeoutMs, options);
  client.defineCommand(GRANT, { lua: GRANT_SCRIPT });
  client.defineCommand(GIVE_BACK, { lua: GIVE_BACK_SCRIPT });
  const commands = client as unknown as Record<typeof GRANT | typeof GIVE_BACK, ScriptCommand>;
  const grant = commands[GRANT].bind(client);
  const giveBackCommand = commands[GIVE_BACK].bind(client);
  const compiledRules = new WeakMap<readonly LimitRule[], CompiledRules>();
  const keys = new Map<string, KeyState>();
  const givingBack = new Set<Promise<unknown>>();
  const grantsInFlight = new Set<Promise<unknown>>();

  let healthy = true;
  let slow = false;
  let lastError = '';
  /** Redis clock − local clock, ms: turns a local deadline into one the script can compare with `TIME`. */
  let clockOffset = 0;
  redisUp.set(1);
  failOpenGauge.set(failOpen ? 1 : 0);
  function reportDown(reason: string): void {
    if (!healthy) return;
    healthy = false;
    redisUp.set(0);
    logger?.warn(
      { backend: 'redis', err: reason },
      'rate-limit counters: Redis unavailable, failing ' + (failOpen ? 'open' : 'closed'),
    );
  }
  function reportUp(): void {
    if (healthy) return;
    healthy = true;
    redisUp.set(1);
    logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis available again');
  }
  function reportSlow(): void {
    if (slow) return;
    slow = true;
    logger?.warn(
      { backend: 'redis', timeoutMs },
      'rate-limit counters: Redis connected but not answering in time; rejecting calls',
    );
  }
  function reportPrompt(): void {
    if (!slow) return;
    slow = false;
    logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis answering in time again');
  }
  client.on('error', (err: Error) => {
    lastError = err.message;
    reportDown(err.message);
  });
  client.on('ready', () => {
    lastError = '';
    reportUp();
    void measureClockOffset();
  });

  async function measureClockOffset(): Promise<void> {
    try {
      const sent = Date.now();
      const [seconds, micros] = await client.time();
      const received = Date.now();
      clockOffset = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - Math.round((sent + received) / 2);
    } catch {
      // Keep the last offset: the next 'ready' measures again.
    }
  }

  // Hits made while the very first connection is being set up wait for it (bounded); later
  // outages fail fast, since the offline queue is off.
  let firstConnection: Promise<void> | undefined = settledOnce(client, Math.max(timeoutMs * 5, 1000)).then(() => {
    firstConnection = undefined;
  });

  const sweep = setInterval(function giveBackIdleLeases() {
    const now = Date.now();
    for (const [key, state] of keys) {
      if (state.inFlight || state.waiters.length > 0) continue;
      if (inUse(state.lease, now) || inUse(state.next, now)) continue;
      giveBackAll(key, state);
      keys.delete(key);
    }
  }, leaseIdleMs);
  sweep.unref();

  function compile(rules: readonly LimitRule[]): CompiledRules {
    let compiled = compiledRules.get(rules);
    if (compiled === undefined) {
      compiled = {
        keySuffixes: rules.map((rule) => `}:${rule.name}:${rule.windowMs}`),
        argv: rules.flatMap((rule) => [String(rule.limit), String(rule.windowMs), rule.hard ? '1' : '0']),
      };
      compiledRules.set(rules, compiled);
    }
    return compiled;
  }

  /** Returns a lease's unused hits to the windows it took them from (those that ended are harmless). */
  function giveBack(key: string, lease: Lease): void {
    const left = unused(lease);
    lease.used = lease.granted;
    if (left <= 0 || client.status !== 'ready') return;
    const { keySuffixes } = compile(lease.rules);
    const windowKeys = keySuffixes.map((suffix, i) => `${keyPrefix}{${key}${suffix}:${lease.windows[i]}`);
    const done = giveBackCommand(windowKeys.length, ...windowKeys, String(left)).catch(() => undefined);
    givingBack.add(done);
    void done.then(() => givingBack.delete(done));
  }

  /** Whether a lease still has hits for calls: used lately, its windows not over. */
  function inUse(lease: Lease | undefined, now: number): boolean {
    return lease !== undefined && now - lease.lastUsed < leaseIdleMs && now < lease.expiresAt && unused(lease) > 0;
  }

  function giveBackAll(key: string, state: KeyState): void {
    if (state.lease !== undefined) giveBack(key, state.lease);
    if (state.next !== undefined) giveBack(key, state.next);
    state.lease = undefined;
    state.next = undefined;
  }

  /** The lease a call of `rules` is admitted from: the current one, else the next one (which becomes current). */
  function usableLease(key: string, state: KeyState, rules: readonly LimitRule[], now: number): Lease | undefined {
    if (canTake(state.lease, rules, now)) return state.lease;
    if (!canTake(state.next, rules, now)) return undefined;
    if (state.lease !== undefined) giveBack(key, state.lease);
    state.lease = state.next;
    state.next = undefined;
    return state.lease;
  }

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
    const reason = `connection is ${client.status}` + (lastError === '' ? '' : ` (${lastError})`);
    reportDown(reason);
    outageDecisions.inc({ decision: failOpen ? 'admitted' : 'rejected' });
    return backendFailureDecision(rules, failOpen, `redis: ${reason}`);
  }

  /** Admits waiting calls from the leases, in order; asks Redis for another when some are left. */
  function serve(key: string, state: KeyState): void {
    const now = Date.now();
    while (state.waiters.length > 0) {
      const lease = usableLease(key, state, state.waiters[0].rules, now);
      if (lease === undefined) break;
      state.waiters.shift()!.resolve(take(key, state, lease, now));
    }
    if (state.waiters.length > 0 && !state.inFlight) requestLease(key, state, state.waiters[0].rules);
  }

  /** Where a granted lease goes: current when the current one is spent, else next, else back to Redis. */
  function place(key: string, state: KeyState, lease: Lease): void {
    if (keys.get(key) !== state) {
      // Swept or closed while the grant was on its way: the hits go straight back.
      giveBack(key, lease);
    } else if (!canTake(state.lease, lease.rules, Date.now())) {
      if (state.lease !== undefined) giveBack(key, state.lease);
      state.lease = lease;
    } else if (state.next === undefined) {
      state.next = lease;
    } else {
      giveBack(key, lease);
    }
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
    const now = Date.now();
    // Leases of another rule set (a republished plan) or of an ended window are of no more use.
    if (state.lease !== undefined && !canTake(state.lease, rules, now)) giveBack(key, state.lease);
    if (state.next !== undefined && !canTake(state.next, rules, now)) {
      giveBack(key, state.next);
      state.next = undefined;
    }
    const { keySuffixes, argv } = compile(rules);
    const base = keyPrefix + '{' + key;
    const sentAt = now;
    const giveUpAt = sentAt + timeoutMs;
    const args = [...keySuffixes.map((suffix) => base + suffix), String(giveUpAt + clockOffset), leaseMax, ...argv];
    state.inFlight = true;
    leaseRequests.inc();
    let settled = false;
    // A timer that fires after a stalled event loop runs before the socket is read: let the
    // poll phase read a reply already there before giving up on it.
    const timer = setTimeout(() => setImmediate(() => settled || giveUp()), timeoutMs);
    const giveUp = () => {
      settled = true;
      state.inFlight = false;
      reportSlow();
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
    const done = grant(keySuffixes.length, ...args).then(
      (reply) => {
        clearTimeout(timer);
        if (reply[0] === -1) {
          if (!settled) giveUp();
          return;
        }
        reportUp();
        const late = settled;
        settled = true;
        state.inFlight = false;
        if (!late) reportPrompt();
        const lease = leaseFromReply(rules, reply, sentAt);
        if (lease !== undefined) place(key, state, lease);
        else if (!late) rejectWaiting(state, rules, blockedFromReply(rules, reply));
        serve(key, state);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        state.inFlight = false;
        lastError = err instanceof Error ? err.message : String(err);
        reportDown(lastError);
        if (state.waiters.length === 0) return;
        outageDecisions.inc({ decision: failOpen ? 'admitted' : 'rejected' });
        const decision = backendFailureDecision(rules, failOpen, `redis: ${lastError}`);
        for (const waiter of state.waiters.splice(0)) waiter.resolve({ ...decision, rules: waiter.rules });
      },
    );
    grantsInFlight.add(done);
    void done.then(() => grantsInFlight.delete(done));
  }

  /** Waits up to the deadline for the connection being set up; then counts, or rejects as slow. */
  async function afterConnecting(key: string, rules: readonly LimitRule[]): Promise<LimitDecision> {
    await settledOnce(client, timeoutMs);
    if (client.status === 'ready' || lastError !== '') return hit(key, rules);
    reportSlow();
    slowRejections.inc();
    const backendError = `redis: connection still being set up after ${timeoutMs} ms`;
    return { allowed: false, results: [], rules, backendError, retryAfterSeconds: 1 };
  }

  async function hit(key: string, rules: readonly LimitRule[]): Promise<LimitDecision> {
    if (rules.length === 0) return { allowed: true, results: [], rules };
    if (firstConnection !== undefined) await firstConnection;
    let state = keys.get(key);
    if (state === undefined) {
      state = { lease: undefined, next: undefined, waiters: [], inFlight: false };
      keys.set(key, state);
    }
    const now = Date.now();
    const lease = state.waiters.length === 0 ? usableLease(key, state, rules, now) : undefined;
    if (lease !== undefined) return take(key, state, lease, now);
    if (client.status !== 'ready' && !state.inFlight) {
      // Still setting up a connection that has not failed (a node just started on a busy
      // machine): a slow answer, not an outage, so it is never admitted uncounted.
      if (lastError === '') return afterConnecting(key, rules);
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
    health: () => ({ backend: 'redis', reachable: healthy, answeringInTime: !slow, failOpen }),
    async close() {
      clearInterval(sweep);
      // A batch on its way is already counted in Redis: wait for it (bounded) so it goes back too.
      const waited = Promise.all(grantsInFlight);
      await Promise.race([waited, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
      for (const [key, state] of keys) giveBackAll(key, state);
      keys.clear();
      await Promise.all(givingBack);
      if (client.status === 'ready') {
        await client.quit().catch(() => client.disconnect());
      } else {
        client.disconnect();
      }
    },
  };
}

/** Rejects the waiting calls of `rules` with a blocked decision; calls of another rule set stay. */
function rejectWaiting(state: KeyState, rules: readonly LimitRule[], decision: LimitDecision): void {
  const others: Waiter[] = [];
  for (const waiter of state.waiters) {
    if (waiter.rules === rules) waiter.resolve(decision);
    else others.push(waiter);
  }
  state.waiters = others;
}

/**
 * Options that make every call fail fast instead of queueing or retrying (a retry could double
 * count). No ioredis `commandTimeout`: the store keeps its own deadline, and a reply that comes
 * after it is still read (a late grant becomes a lease, not a lost count).
 */
function failFastOptions(timeoutMs: number): RedisOptions {
  return {
    connectTimeout: Math.max(timeoutMs * 5, 1000),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  };
}

function connect(url: string, timeoutMs: number, options: RedisCounterStoreOptions): Redis | Cluster {
  const own = failFastOptions(timeoutMs);
  if (!options.cluster) return new Redis(url, { ...options.redisOptions, ...own });
  const seed = new URL(url);
  const clusterOptions: ClusterOptions = {
    enableOfflineQueue: false,
    redisOptions: {
      ...options.redisOptions,
      ...own,
      username: decodeURIComponent(seed.username) || undefined,
      password: decodeURIComponent(seed.password) || undefined,
      tls: seed.protocol === 'rediss:' ? {} : undefined,
    },
  };
  return new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], clusterOptions);
}

/** Resolves when the client first becomes ready or fails, or after `ms`, whichever comes first. */
function settledOnce(client: Redis | Cluster, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    client.once('ready', done);
    client.once('error', done);
    client.once('end', done);
    function done(): void {
      clearTimeout(timer);
      client.off('ready', done);
      client.off('error', done);
      client.off('end', done);
      resolve();
    }
  });
}
