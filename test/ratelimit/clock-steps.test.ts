/**
 * Clock steps (NTP steps, a VM resumed, a clock set by hand) on the memory store and on the real
 * Redis: a step in either direction never admits more than a hard limit in a window, and costs
 * no call a rejection it did not earn (docs/rate-limits.md, "Clocks").
 *
 * A step of the wall clock is staged the way the process sees one: `Date.now` jumps while the
 * monotonic clock (`performance.now`) runs on. A step of the node's own clock against Redis (a
 * VM resumed after a suspend, Redis's host stepped) is staged through the store's `now` option.
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createRedisCounterStore } from '../../src/ratelimit/redis.ts';
import type { CounterStore, LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { REDIS_URL, awaitRoomInWindow, backends, deleteRedisKeys, freshKeyPrefix } from './helpers.ts';
import { startPrivateRedis } from './private-redis.ts';

const HOUR = 3_600_000;

/** `Date.now` as the process sees it after the wall clock stepped by `skewMs`; `restore` puts the real one back. */
function steppableWallClock(): { stepTo(skewMs: number): void; real(): number; restore(): void } {
  const real = Date.now;
  let skewMs = 0;
  Date.now = () => real() + skewMs;
  return {
    stepTo: (ms) => void (skewMs = ms),
    real: () => real(),
    restore: () => void (Date.now = real),
  };
}

/** A clock that never steps unless told to: the monotonic clock plus a skew the test sets. */
function steppableNodeClock(): { now(): number; stepTo(skewMs: number): void } {
  let skewMs = 0;
  return { now: () => performance.timeOrigin + performance.now() + skewMs, stepTo: (ms) => void (skewMs = ms) };
}

/** What a decision shows of itself: admitted, why the backend failed (if it did), the count. */
const outcome = (d: LimitDecision) => [d.allowed, d.backendError, d.results[0]?.count];

async function hits(
  store: CounterStore,
  key: string,
  rules: readonly LimitRule[],
  n: number,
): Promise<LimitDecision[]> {
  const decisions: LimitDecision[] = [];
  for (let i = 0; i < n; i++) decisions.push(await store.hit(key, rules));
  return decisions;
}

for (const backend of backends) {
  describe(`counter store: ${backend.name}, when the wall clock steps`, () => {
    const keyPrefix = freshKeyPrefix(`clock-${backend.name}`);
    let wall: ReturnType<typeof steppableWallClock>;
    let store: CounterStore;
    before(() => {
      // Stepped before the store exists: a store that reads the wall clock sees every step.
      wall = steppableWallClock();
      store = backend.create(keyPrefix);
    });
    after(async () => {
      wall.restore();
      await store.close();
      if (backend.name === 'redis') await deleteRedisKeys(keyPrefix);
    });

    it('admits nothing over a hard limit after a step back across a window boundary and a step forward past the next one', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 5, windowMs: HOUR, hard: true }];
      await awaitRoomInWindow(HOUR, 60_000);
      assert.deepEqual((await hits(store, 'stepped', rules, 5)).map(outcome), [
        [true, undefined, 1],
        [true, undefined, 2],
        [true, undefined, 3],
        [true, undefined, 4],
        [true, undefined, 5],
      ]);
      wall.stepTo(-HOUR);
      const afterBackStep = await hits(store, 'stepped', rules, 3);
      wall.stepTo(HOUR);
      const afterForwardStep = await hits(store, 'stepped', rules, 3);
      wall.stepTo(0);
      // Rejected by the count, as before the steps: not a fresh window, not a backend "too slow".
      assert.deepEqual([...afterBackStep, ...afterForwardStep].map(outcome), new Array(6).fill([false, undefined, 5]));
    });
  });
}

describe('counter store: redis, when the node clock steps against Redis', () => {
  const keyPrefix = freshKeyPrefix('clock-offset');
  const rules: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: HOUR, hard: true }];
  before(() => awaitRoomInWindow(HOUR, 60_000));
  after(() => deleteRedisKeys(keyPrefix));

  it('costs no call when the node clock steps 2 s behind Redis', async () => {
    const clock = steppableNodeClock();
    const store = createRedisCounterStore({ url: REDIS_URL, failOpen: false, keyPrefix, leaseMax: 1, now: clock.now });
    try {
      assert.equal((await store.hit('behind', rules)).allowed, true);
      clock.stepTo(-2000);
      assert.deepEqual(
        (await hits(store, 'behind', rules, 5)).map(outcome),
        [2, 3, 4, 5, 6].map((count) => [true, undefined, count]),
      );
    } finally {
      await store.close();
    }
  });

  it(
    'charges nobody for a command that reaches Redis after its caller gave up, after the node clock stepped 2 s ahead',
    { timeout: 30_000 },
    async () => {
      const redis = await startPrivateRedis();
      const clock = steppableNodeClock();
      const store = createRedisCounterStore({
        url: redis.url,
        failOpen: false,
        keyPrefix: 'ahead:',
        leaseMax: 1,
        timeoutMs: 200,
        now: clock.now,
      });
      const raw = new Redis(redis.url);
      try {
        assert.equal((await store.hit('ahead', rules)).allowed, true);
        clock.stepTo(2000);
        assert.equal((await store.hit('ahead', rules)).allowed, true);
        redis.freeze();
        // Held 700 ms, well past its 200 ms deadline, but not past one reckoned with the stale offset.
        const held = store.hit('ahead', rules);
        await sleep(700);
        redis.thaw();
        assert.match((await held).backendError ?? '', /no answer within 200 ms/);
        await sleep(300);
        const values = await Promise.all((await raw.keys('ahead:{ahead}*')).map((key) => raw.get(key)));
        assert.deepEqual(values, ['2'], 'Redis holds the two admitted hits, not the call that gave up');
      } finally {
        await store.close();
        raw.disconnect();
        await redis.stop();
      }
    },
  );

  for (const stepped of ['wall clock', 'steady clock'] as const) {
    const title =
      stepped === 'wall clock'
        ? 'admits no hit of a lease from the window before in the next one after the wall clock stepped back'
        : 'admits no hit of a lease from the window before in the next one after the host was suspended';
    it(title, async () => {
      // Node A holds a lease of 10 (9 unused) when its clock falls 4 s behind: the wall clock
      // stepped back, or the steady clock missed a suspend. Node B's clocks are right.
      const window: readonly LimitRule[] = [{ name: 'default', limit: 80, windowMs: 2000, hard: true }];
      const key = `lease-${stepped}`;
      const wall = steppableWallClock();
      const steadyA = steppableNodeClock();
      const nodeA = createRedisCounterStore({
        url: REDIS_URL,
        failOpen: false,
        keyPrefix,
        leaseIdleMs: 60_000,
        ...(stepped === 'steady clock' ? { now: steadyA.now } : {}),
      });
      const nodeB = createRedisCounterStore({
        url: REDIS_URL,
        failOpen: false,
        keyPrefix,
        now: steppableNodeClock().now,
      });
      try {
        await sleep(2000 - (wall.real() % 2000) + 10);
        assert.deepEqual(outcome(await nodeA.hit(key, window)), [true, undefined, 1]);
        if (stepped === 'wall clock') wall.stepTo(-4000);
        else steadyA.stepTo(-4000);
        await sleep(2000 - (wall.real() % 2000) + 10);
        const windowStart = wall.real();
        const fromB = await hits(nodeB, key, window, 81);
        const fromA = await hits(nodeA, key, window, 10);
        assert.ok(wall.real() - windowStart < 1900, 'every hit in one 2 s window');
        const admitted = [...fromB, ...fromA].filter((d) => d.allowed).length;
        assert.equal(admitted, 80, 'A and B together admit the limit in the window, no more');
        assert.deepEqual(fromA.map(outcome), new Array(10).fill([false, undefined, 80]));
      } finally {
        wall.restore();
        await nodeA.close();
        await nodeB.close();
      }
    });
  }
});
