/**
 * What one `CounterStore.hit` costs: hits/s and µs per hit on one key, for the memory store and
 * the Redis store with leases (default batch) and without (`leaseMax` 1), with 1 and 32 callers
 * awaiting hits back to back. The Redis figures use the real Redis at `PORTICO_BENCH_REDIS_URL`
 * (default redis://127.0.0.1:6379) under a key prefix of this run's own, deleted at the end.
 *
 *   node --import tsx bench/counter-cost.ts [--seconds 3] [--label after] [--baseline <redis store module>]
 *
 * Two ways of calling: "tight" awaits hits back to back (a resolved hit never lets the event loop
 * read a socket, so a reply is read only when a caller has to wait for it), "I/O-paced" yields to
 * the event loop (`setImmediate`) between hits, as a gateway does between requests arriving on
 * sockets. `--baseline` adds rows for another copy of the Redis store (e.g. the code before a
 * change, `git show <commit>:src/ratelimit/redis.ts > src/ratelimit/redis-baseline.ts`).
 *
 * Wall µs per hit = elapsed / hits (with 32 callers, the cost of one hit of throughput); CPU µs
 * per hit = this process's user+system time / hits (Redis's own CPU not included); "waits" =
 * hits that took longer than 1 ms, i.e. that waited for a round trip.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { register } from 'prom-client';
import { createMemoryCounterStore } from '../src/ratelimit/memory.ts';
import { createRedisCounterStore } from '../src/ratelimit/redis.ts';
import type { CounterStore, LimitRule } from '../src/ratelimit/types.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    label: { type: 'string', default: '' },
    baseline: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const redisUrl = process.env.PORTICO_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `portico-bench:counter-cost:${process.pid}:${Date.now()}:`;
// The bench's portico-full plan: counted, never reached.
const RULES: readonly LimitRule[] = [{ name: 'default', limit: 1_000_000_000, windowMs: 3_600_000, hard: true }];

interface Row {
  store: string;
  callers: number;
  paced: boolean;
  hits: number;
  hitsPerSecond: number;
  wallMicros: number;
  cpuMicros: number;
  waits: number;
  worstMs: number;
  rejected: number;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function measure(name: string, store: CounterStore, callers: number, paced: boolean, key: string): Promise<Row> {
  // Warm-up: the first lease, the script loaded, the JIT.
  const warmUntil = performance.now() + 300;
  while (performance.now() < warmUntil) await store.hit(key, RULES);
  let hits = 0;
  let waits = 0;
  let worst = 0;
  let rejected = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  async function caller(): Promise<void> {
    while (performance.now() < until) {
      const t = performance.now();
      const decision = await store.hit(key, RULES);
      const took = performance.now() - t;
      hits++;
      if (!decision.allowed) rejected++;
      if (took > 1) waits++;
      if (took > worst) worst = took;
      if (paced) await turn();
    }
  }
  await Promise.all(Array.from({ length: callers }, caller));
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    store: name,
    callers,
    paced,
    hits,
    hitsPerSecond: Math.round((hits / elapsed) * 1000),
    wallMicros: Number(((elapsed * 1000) / hits).toFixed(2)),
    cpuMicros: Number(((used.user + used.system) / hits).toFixed(2)),
    waits,
    worstMs: Number(worst.toFixed(1)),
    rejected,
  };
}

const stores: Array<[string, () => CounterStore]> = [
  ['memory', () => createMemoryCounterStore()],
  ['redis leaseMax 1', () => createRedisCounterStore({ url: redisUrl, keyPrefix, leaseMax: 1, failOpen: false })],
  ['redis leases (20)', () => createRedisCounterStore({ url: redisUrl, keyPrefix, failOpen: false })],
];
if (values.baseline !== undefined) {
  // The copy registers the same metric names: only the bench reads neither.
  register.clear();
  const baseline = (await import(new URL(values.baseline, `file://${process.cwd()}/`).href)) as {
    createRedisCounterStore: typeof createRedisCounterStore;
  };
  stores.push([
    'redis leases (20), baseline',
    () => baseline.createRedisCounterStore({ url: redisUrl, keyPrefix, failOpen: false }),
  ]);
}

const rows: Row[] = [];
for (const paced of [false, true]) {
  for (const [name, create] of stores) {
    for (const callers of [1, 32]) {
      const store = create();
      try {
        rows.push(await measure(name, store, callers, paced, `${name}:${callers}:${paced}`.replace(/\W+/g, '-')));
      } finally {
        await store.close();
      }
    }
  }
}

const redis = new Redis(redisUrl);
try {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
} finally {
  await redis.quit();
}

const { loadavg } = await import('node:os');
const load = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');
console.log(`counter-cost ${values.label} — ${seconds} s per row, load average ${load}`);
console.log('| store | calling | callers | hits/s | wall µs/hit | CPU µs/hit | hits > 1 ms | worst ms | rejected |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const calling = r.paced ? 'I/O-paced' : 'tight';
  const cells = [r.store, calling, r.callers, r.hitsPerSecond, r.wallMicros, r.cpuMicros, r.waits, r.worstMs];
  cells.push(r.rejected);
  console.log(`| ${cells.join(' | ')} |`);
}
