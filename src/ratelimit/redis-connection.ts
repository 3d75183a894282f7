/**
 * The Redis counter store's connection: ioredis options that never queue or resend a command,
 * and the connection's health as /metrics, /ready and the logs show it — down (no connection:
 * the fail-open/closed decision) told apart from slow (connected, no answer in time: rejected)
 * and from refusing (connected, the command answered with an error reply: rejected).
 */
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { Counter, Gauge } from 'prom-client';

// Readable on /metrics: whether this node's counters reach Redis, and which way it fails.
const redisUp = new Gauge({
  name: 'portico_ratelimit_redis_up',
  help: '1 while rate-limit counters reach Redis; 0 during an outage (calls follow PORTICO_RATELIMIT_FAIL_OPEN)',
});
const failOpenGauge = new Gauge({
  name: 'portico_ratelimit_fail_open',
  help: '1 when calls are admitted while Redis is unreachable, 0 when they are rejected',
});
export const slowRejections = new Counter({
  name: 'portico_ratelimit_slow_rejections_total',
  help: 'Calls rejected because Redis was connected but did not answer within PORTICO_RATELIMIT_TIMEOUT_MS',
});
export const errorRejections = new Counter({
  name: 'portico_ratelimit_error_rejections_total',
  help: 'Calls rejected because Redis was connected but answered the counting command with an error (OOM, READONLY, BUSY, …)',
});
export const outageDecisions = new Counter({
  name: 'portico_ratelimit_unreachable_decisions_total',
  help: 'Calls decided by PORTICO_RATELIMIT_FAIL_OPEN because Redis was unreachable, by decision',
  labelNames: ['decision'],
});
export const leaseRequests = new Counter({
  name: 'portico_ratelimit_lease_requests_total',
  help: 'Round trips to Redis for a batch of hits (one per batch, not per call)',
});

/** The slice of a logger the store uses (a pino logger fits). */
export type CounterStoreLogger = Pick<Logger, 'warn' | 'info'>;

/** Where the connection stands; one log line per change, gauges on /metrics. */
export class RedisHealth {
  healthy = true;
  slow = false;
  /** Connected, but the counting command comes back as an error reply (OOM, READONLY, BUSY, …). */
  refusing = false;
  lastError = '';

  constructor(
    private readonly client: Redis | Cluster,
    private readonly failOpen: boolean,
    private readonly timeoutMs: number,
    private readonly logger: CounterStoreLogger | undefined,
  ) {
    redisUp.set(1);
    failOpenGauge.set(failOpen ? 1 : 0);
    client.on('error', (err: Error) => {
      this.lastError = err.message;
      this.down(err.message);
    });
    client.on('ready', () => {
      this.lastError = '';
      this.up();
    });
  }

  down(reason: string): void {
    if (!this.healthy) return;
    this.healthy = false;
    redisUp.set(0);
    this.logger?.warn(
      { backend: 'redis', err: reason },
      'rate-limit counters: Redis unavailable, failing ' + (this.failOpen ? 'open' : 'closed'),
    );
  }

  up(): void {
    if (this.healthy) return;
    this.healthy = true;
    redisUp.set(1);
    this.logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis available again');
  }

  slowed(): void {
    if (this.slow) return;
    this.slow = true;
    this.logger?.warn(
      { backend: 'redis', timeoutMs: this.timeoutMs },
      'rate-limit counters: Redis connected but not answering in time; rejecting calls',
    );
  }

  /** An error reply from a connected Redis: logged once per episode; calls are rejected, not failed open. */
  refused(reason: string): void {
    if (this.refusing) return;
    this.refusing = true;
    this.logger?.warn(
      { backend: 'redis', err: reason },
      'rate-limit counters: Redis connected but refusing to count; rejecting calls',
    );
  }

  counting(): void {
    if (!this.refusing) return;
    this.refusing = false;
    this.logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis counting again');
  }

  prompt(): void {
    if (!this.slow) return;
    this.slow = false;
    this.logger?.info({ backend: 'redis' }, 'rate-limit counters: Redis answering in time again');
  }
}

/** The connection settings the store takes from its options. */
export interface ConnectOptions {
  cluster?: boolean;
  redisOptions?: RedisOptions;
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

export function connect(url: string, timeoutMs: number, options: ConnectOptions): Redis | Cluster {
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
export function settledOnce(client: Redis | Cluster, ms: number): Promise<void> {
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
