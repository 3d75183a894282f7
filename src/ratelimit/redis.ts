/**
 * Redis counter store, shared by every gateway node: one Lua script call per hit checks and
 * counts all of a plan's rules atomically, in one round trip.
 *
 * - Windows are fixed and aligned on the Redis server's clock (`TIME`), so every node agrees on
 *   the window boundaries whatever its own clock says. A window's key is
 *   `<prefix>{<key>}:<rule name>:<windowMs>:<window index>`; it gets `PEXPIRE` on its first hit.
 * - Check-then-count: the script reads every rule's window, rejects without counting when a hard
 *   rule is already at its limit, and otherwise `INCR`s every rule. Redis runs a script alone, so
 *   N gateways together never admit more than `limit` hits in a window of a hard rule.
 * - `{<key>}` is a Cluster hash tag: every key one hit touches lives in the same slot.
 * - The script goes through ioredis' `defineCommand`, which sends `EVALSHA` and falls back to
 *   `EVAL` (loading the script) on `NOSCRIPT`, e.g. after a Redis restart or failover.
 * - Backend failures (unreachable, timed out) follow `failOpen`, and are logged once per outage.
 */

import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { backendFailureDecision, buildDecision } from './decision.ts';
import type { CounterStore, LimitDecision, LimitRule } from './types.ts';

/** The slice of a logger the store uses (a pino logger fits). */
// Readable on /metrics: whether this node's counters reach Redis, and which way it fails.
const redisUp = new Gauge({ name: 'portico_ratelimit_redis_up', help: '1 while rate-limit counters reach Redis; 0 during an outage (calls follow PORTICO_RATELIMIT_FAIL_OPEN)' });
const failOpenGauge = new Gauge({ name: 'portico_ratelimit_fail_open', help: '1 when calls are admitted while Redis is unreachable, 0 when they are rejected' });

export type CounterStoreLogger = Pick<Logger, 'warn' | 'info'>;

export interface RedisCounterStoreOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…` (TLS). With `cluster`, the seed node. */
  url: string;
  /** When Redis fails: admit (true, default) or reject (false); either way `backendError` is set. */
  failOpen?: boolean;
  logger?: CounterStoreLogger;
  /** Prefix of every key the store writes. Default `portico:rl:`. */
  keyPrefix?: string;
  /** Per-command timeout; a slower answer counts as a backend failure. Default 200 ms. */
  timeoutMs?: number;
  /** Talk to a Redis Cluster, discovering it from the node in `url`. */
  cluster?: boolean;
  /**
   * Extra ioredis options, merged under the store's own (timeouts, offline queue). Sentinel:
   * `{ sentinels: [{ host, port }], name: 'mymaster' }`.
   */
  redisOptions?: RedisOptions;
}

/**
 * KEYS[i]: the window key of rule i without its window index. ARGV: limit, windowMs, hard
 * (1/0) per rule. Returns { blocked (1/0), count_1, resetMs_1, count_2, resetMs_2, … }.
 */
const HIT_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local n = #KEYS
local keys, counts, resets = {}, {}, {}
local blocked = 0
for i = 1, n do
  local limit = tonumber(ARGV[i * 3 - 2])
  local windowMs = tonumber(ARGV[i * 3 - 1])
  local index = math.floor(now / windowMs)
  keys[i] = KEYS[i] .. ':' .. string.format('%d', index)
  counts[i] = tonumber(redis.call('GET', keys[i]) or '0')
  resets[i] = (index + 1) * windowMs - now
  if ARGV[i * 3] == '1' and counts[i] >= limit then blocked = 1 end
end
if blocked == 0 then
  for i = 1, n do
    counts[i] = redis.call('INCR', keys[i])
    if counts[i] == 1 then redis.call('PEXPIRE', keys[i], resets[i] + 1000) end
  end
end
local reply = { blocked }
for i = 1, n do
  reply[i * 2] = counts[i]
  reply[i * 2 + 1] = resets[i]
end
return reply
`;

const COMMAND = 'porticoRateLimitHit';

type HitCommand = (numberOfKeys: number, ...args: string[]) => Promise<number[]>;

/** What is fixed per rule set: the key suffixes and the script's ARGV. */
interface CompiledRules {
  keySuffixes: string[];
  argv: string[];
}

/** Creates the Redis counter store (scaled-out gateways share its counters). */
export function createRedisCounterStore(options: RedisCounterStoreOptions): CounterStore {
  const failOpen = options.failOpen ?? true;
  const timeoutMs = options.timeoutMs ?? 200;
  const keyPrefix = options.keyPrefix ?? 'portico:rl:';
  const logger = options.logger;
  const client = connect(options.url, timeoutMs, options);
  client.defineCommand(COMMAND, { lua: HIT_SCRIPT });
  const hitCommand = (client as unknown as Record<typeof COMMAND, HitCommand>)[COMMAND].bind(client);
  const compiledRules = new WeakMap<readonly LimitRule[], CompiledRules>();

  let healthy = true;
  let lastError = '';
  redisUp.set(1);
  failOpenGauge.set(failOpen ? 1 : 0);
  function reportDown(reason: string): void {
    if (!healthy) return;
    healthy = false;
    redisUp.set(0);
    logger?.warn({ backend: 'redis', err: reason }, 'rate-limit counters: Redis unavailable, failing ' + (failOpen ? 'open' : 'closed'));
  }
  function reportUp(): void {
    if (healthy) return;
    healthy = true;
    redisUp.set(1);
    logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis available again');
  }
  client.on('error', (err: Error) => {
    lastError = err.message;
    reportDown(err.message);
  });
  client.on('ready', () => {
    lastError = '';
    reportUp();
  });

  // Hits made while the very first connection is being set up wait for it (bounded); later
  // outages fail fast, since the offline queue is off.
  let firstConnection: Promise<void> | undefined = settledOnce(client, Math.max(timeoutMs * 5, 1000)).then(() => {
    firstConnection = undefined;
  });

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

  async function hit(key: string, rules: readonly LimitRule[]): Promise<LimitDecision> {
    if (rules.length === 0) return { allowed: true, results: [], rules };
    if (firstConnection !== undefined) await firstConnection;
    if (client.status !== 'ready') {
      const reason = `connection is ${client.status}` + (lastError === '' ? '' : ` (${lastError})`);
      reportDown(reason);
      return backendFailureDecision(rules, failOpen, `redis: ${reason}`);
    }
    const { keySuffixes, argv } = compile(rules);
    const base = keyPrefix + '{' + key;
    const args = new Array<string>(keySuffixes.length + argv.length);
    for (let i = 0; i < keySuffixes.length; i++) args[i] = base + keySuffixes[i];
    for (let i = 0; i < argv.length; i++) args[keySuffixes.length + i] = argv[i];
    let reply: number[];
    try {
      reply = await hitCommand(keySuffixes.length, ...args);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      lastError = reason;
      reportDown(reason);
      return backendFailureDecision(rules, failOpen, `redis: ${reason}`);
    }
    reportUp();
    return decisionFromReply(rules, reply);
  }

  return {
    kind: 'redis',
    hit,
    async close() {
      if (client.status === 'ready') {
        await client.quit().catch(() => client.disconnect());
      } else {
        client.disconnect();
      }
    },
  };
}

function decisionFromReply(rules: readonly LimitRule[], reply: number[]): LimitDecision {
  const counts = new Array<number>(rules.length);
  const resets = new Array<number>(rules.length);
  for (let i = 0; i < rules.length; i++) {
    counts[i] = reply[i * 2 + 1];
    resets[i] = reply[i * 2 + 2];
  }
  return buildDecision(rules, counts, resets, reply[0] === 1);
}

/** Options that make every call fail fast instead of queueing or retrying (a retry could double count). */
function failFastOptions(timeoutMs: number): RedisOptions {
  return {
    commandTimeout: timeoutMs,
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
