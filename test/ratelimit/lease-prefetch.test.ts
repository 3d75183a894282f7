/**
 * Leases refilled ahead (docs/rate-limits.md, "Leases"): the next batch is asked for once half of
 * the current one is used. On the real Redis (a fresh key prefix) and, for the refill that
 * fails, a private redis-server frozen with SIGSTOP.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createRedisCounterStore } from '../../src/ratelimit/redis.ts';
import type { CounterStore, LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { REDIS_URL, awaitRoomInWindow, deleteRedisKeys, freshKeyPrefix } from './helpers.ts';
import { startPrivateRedis } from './private-redis.ts';

const HOUR = 3_600_000;
const RULES: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: HOUR, hard: true }];
/** Batches of 10 while more than 80 hits are left (the grant is at most 1/8 of the remainder). */
const LEASE_MAX = 10;

/** The count Redis holds for `key`'s current hourly window. */
async function redisCount(raw: Redis, keyPrefix: string, key: string): Promise<number> {
  const [seconds] = await raw.time();
  const window = Math.floor((Number(seconds) * 1000) / HOUR);
  return Number((await raw.get(`${keyPrefix}{${key}}:default:${HOUR}:${window}`)) ?? 0);
}

/** Polls until Redis holds `expected` for `key`, up to 3 s; returns the last count read. */
async function awaitCount(raw: Redis, keyPrefix: string, key: string, expected: number): Promise<number> {
  const deadline = Date.now() + 3000;
  let count = await redisCount(raw, keyPrefix, key);
  while (count !== expected && Date.now() < deadline) {
    await sleep(20);
    count = await redisCount(raw, keyPrefix, key);
  }
  return count;
}

/** `n` hits one after another, each after a turn of the event loop (as requests arrive on sockets). */
async function hitsInTurn(store: CounterStore, key: string, n: number): Promise<LimitDecision[]> {
  const decisions: LimitDecision[] = [];
  for (let i = 0; i < n; i++) {
    decisions.push(await store.hit(key, RULES));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return decisions;
}

const counts = (decisions: LimitDecision[]) => decisions.filter((d) => d.allowed).map((d) => d.results[0].count);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('counter store: redis, leases refilled ahead', () => {
  const keyPrefix = freshKeyPrefix('prefetch');
  let raw: Redis;
  before(async () => {
    raw = new Redis(REDIS_URL);
    await awaitRoomInWindow(HOUR, 60_000);
  });
  after(async () => {
    raw.disconnect();
    await deleteRedisKeys(keyPrefix);
  });

  it('asks for the next batch once half of the lease is used, and still admits exactly the limit', async () => {
    const store = createRedisCounterStore({
      url: REDIS_URL,
      failOpen: false,
      keyPrefix,
      leaseMax: LEASE_MAX,
    });
    try {
      const first = await hitsInTurn(store, 'ahead', 4);
      assert.equal(await redisCount(raw, keyPrefix, 'ahead'), 10, 'one batch of 10 while less than half is used');
      first.push(...(await hitsInTurn(store, 'ahead', 1)));
      assert.equal(await awaitCount(raw, keyPrefix, 'ahead', 20), 20, 'the 5th hit of 10 asks for the next batch');
      const rest = await hitsInTurn(store, 'ahead', 100);
      const all = [...first, ...rest];
      assert.deepEqual(counts(all), range(1, 100), 'hits 1..100 admitted in order, each with its own count');
      assert.deepEqual(
        all.slice(100).map((d) => d.allowed),
        new Array(5).fill(false),
      );
      assert.ok(all.every((d) => d.backendError === undefined));
      assert.equal(await redisCount(raw, keyPrefix, 'ahead'), 100);
    } finally {
      await store.close();
    }
    assert.equal(await redisCount(raw, keyPrefix, 'ahead'), 100);
  });

  it('serves callers that arrive during a refill in order; two nodes together admit exactly the limit', async () => {
    const options = { url: REDIS_URL, failOpen: false, keyPrefix, leaseMax: LEASE_MAX };
    const nodes = [0, 1].map(() => createRedisCounterStore(options));
    try {
      // Each node's first batch is in hand, half used: its refill is on the way when the burst comes.
      for (const node of nodes) await hitsInTurn(node, 'two-nodes', 5);
      const burst = (node: CounterStore) => Promise.all(range(1, 150).map(() => node.hit('two-nodes', RULES)));
      const bursts = await Promise.all(nodes.map(burst));
      const all = [...bursts[0], ...bursts[1]];
      assert.equal(all.filter((d) => d.backendError !== undefined).length, 0);
      assert.equal(all.filter((d) => d.allowed).length, 90, 'with the 10 hits before the burst: 100');
      for (const burst of bursts) {
        const own = counts(burst);
        assert.deepEqual(
          own,
          [...own].sort((a, b) => a - b),
          'a node admits its waiting calls in order',
        );
      }
      // Batches are disjoint ranges of the window's count: every admitted hit has its own.
      const union = [...counts(bursts[0]), ...counts(bursts[1])].sort((a, b) => a - b);
      assert.equal(new Set(union).size, 90);
      assert.ok(
        union.every((c) => c >= 1 && c <= 100),
        `counts within 1..100: ${union.join(',')}`,
      );
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
    }
    assert.equal(await redisCount(raw, keyPrefix, 'two-nodes'), 100);
  });

  it('returns the unused hits of both batches on close', async () => {
    const store = createRedisCounterStore({
      url: REDIS_URL,
      failOpen: false,
      keyPrefix,
      leaseMax: LEASE_MAX,
    });
    try {
      await hitsInTurn(store, 'close-both', 6);
      assert.equal(await awaitCount(raw, keyPrefix, 'close-both', 20), 20, 'two batches held');
    } finally {
      await store.close();
    }
    assert.equal(await redisCount(raw, keyPrefix, 'close-both'), 6, 'only the 6 admitted hits stay counted');
  });

  it('returns a batch still on its way when the store closes', async () => {
    const store = createRedisCounterStore({
      url: REDIS_URL,
      failOpen: false,
      keyPrefix,
      leaseMax: LEASE_MAX,
    });
    try {
      await hitsInTurn(store, 'close-in-flight', 1);
      // Hits 2..10 use up the batch in one go; the 5th asked for the next, closed before its reply.
      const rest = await Promise.all(Array.from({ length: 9 }, () => store.hit('close-in-flight', RULES)));
      assert.deepEqual(counts(rest), range(2, 10));
    } finally {
      await store.close();
    }
    assert.equal(await redisCount(raw, keyPrefix, 'close-in-flight'), 10, 'the batch on its way went back');
  });

  it('returns both batches once the key idles', async () => {
    const options = { url: REDIS_URL, failOpen: false, keyPrefix, leaseMax: LEASE_MAX, leaseIdleMs: 200 };
    const store = createRedisCounterStore(options);
    try {
      await hitsInTurn(store, 'idle-both', 6);
      const count = await awaitCount(raw, keyPrefix, 'idle-both', 6);
      assert.equal(count, 6, 'idle for more than 200 ms: back to the 6 used');
    } finally {
      await store.close();
    }
  });
});

describe('counter store: redis, a refill that fails', () => {
  const title = 'serves from the lease in hand, then rejects (never admits uncounted), and charges nothing late';
  it(title, { timeout: 30_000 }, async () => {
    const redis = await startPrivateRedis();
    const raw = new Redis(redis.url);
    const keyPrefix = 'refill-fails:';
    const options = { url: redis.url, failOpen: true, timeoutMs: 200, keyPrefix, leaseMax: LEASE_MAX };
    const store = createRedisCounterStore(options);
    try {
      const before = await hitsInTurn(store, 'frozen', 4);
      assert.deepEqual(counts(before), [1, 2, 3, 4]);
      redis.freeze();
      // The 5th asks for the next batch, which never comes; the lease in hand still serves 5..10
      // (a hit that waited for Redis here would be rejected after 200 ms, not admitted).
      const inHand = await hitsInTurn(store, 'frozen', 6);
      assert.deepEqual(counts(inHand), [5, 6, 7, 8, 9, 10]);
      assert.ok(inHand.every((d) => d.backendError === undefined));
      const past = await hitsInTurn(store, 'frozen', 3);
      assert.deepEqual(
        past.map((d) => d.allowed),
        [false, false, false],
        'past the lease, a slow Redis rejects',
      );
      for (const d of past) assert.match(d.backendError ?? '', /no answer within 200 ms/);
      redis.thaw();
      await sleep(300);
      const next = await store.hit('frozen', RULES);
      assert.equal(next.allowed, true);
      assert.equal(next.results[0].count, 11, 'the refill and the requests sent while frozen counted nothing');
    } finally {
      await store.close();
    }
    try {
      assert.equal(await redisCount(raw, keyPrefix, 'frozen'), 11, 'after close, exactly the 11 admitted hits');
    } finally {
      raw.disconnect();
      await redis.stop();
    }
  });
});
