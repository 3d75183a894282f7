/**
 * One suite, every counter backend: in-process memory and the real Redis (no mocks).
 */

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimitHeaders } from '../../src/ratelimit/headers.ts';
import type { CounterStore, LimitRule } from '../../src/ratelimit/types.ts';
import { awaitNextWindow, awaitRoomInWindow, backends, deleteRedisKeys, freshKeyPrefix, headerMap } from './helpers.ts';

const HOUR = 3_600_000;

for (const backend of backends) {
  describe(`counter store: ${backend.name}`, () => {
    const keyPrefix = freshKeyPrefix(backend.name);
    let store: CounterStore;
    before(() => {
      store = backend.create(keyPrefix);
    });
    after(async () => {
      await store.close();
      if (backend.name === 'redis') await deleteRedisKeys(keyPrefix);
    });

    it('admits 100 hits then rejects the 101st on a hard 100/1hour limit, with API Connect and IETF headers', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: HOUR, hard: true }];
      await awaitRoomInWindow(HOUR, 60_000);
      for (let i = 1; i <= 100; i++) {
        const decision = await store.hit('hard-100', rules);
        assert.equal(decision.allowed, true, `hit ${i} admitted`);
        assert.equal(decision.backendError, undefined);
        const headers = headerMap(rateLimitHeaders(decision));
        assert.equal(headers['X-RateLimit-Limit'], 'name=default,100;');
        assert.equal(headers['X-RateLimit-Remaining'], `name=default,${100 - i};`);
        assert.equal(headers['RateLimit-Policy'], '"default";q=100;w=3600');
        assert.match(headers['RateLimit'], new RegExp(`^"default";r=${100 - i};t=\\d+$`));
        assert.equal(headers['Retry-After'], undefined);
      }

      const rejected = await store.hit('hard-100', rules);
      assert.equal(rejected.allowed, false);
      assert.equal(rejected.results[0].exceeded, true);
      assert.equal(rejected.results[0].count, 100, 'the rejected hit is not counted');
      const headers = headerMap(rateLimitHeaders(rejected));
      assert.equal(headers['X-RateLimit-Limit'], 'name=default,100;');
      assert.equal(headers['X-RateLimit-Remaining'], 'name=default,0;');
      assert.equal(headers['RateLimit-Policy'], '"default";q=100;w=3600');
      const t = Number(/^"default";r=0;t=(\d+)$/.exec(headers['RateLimit'])?.[1]);
      const retryAfter = Number(headers['Retry-After']);
      assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
      assert.ok(t > 0 && t <= 3600 && retryAfter >= t, `t=${t}, Retry-After ${retryAfter}`);
      assert.equal(rejected.retryAfterSeconds, retryAfter);
    });

    it('never rejects on a soft limit, and reports remaining 0 and exceeded past it', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 5, windowMs: HOUR, hard: false }];
      await awaitRoomInWindow(HOUR, 60_000);
      const decisions = [];
      for (let i = 0; i < 8; i++) decisions.push(await store.hit('soft-5', rules));
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, true, true, true, true, true, true],
      );
      assert.deepEqual(
        decisions.map((d) => d.results[0].count),
        [1, 2, 3, 4, 5, 6, 7, 8],
      );
      assert.deepEqual(
        decisions.map((d) => d.results[0].remaining),
        [4, 3, 2, 1, 0, 0, 0, 0],
      );
      assert.deepEqual(
        decisions.map((d) => d.results[0].exceeded),
        [false, false, false, false, false, true, true, true],
      );
      const headers = headerMap(rateLimitHeaders(decisions[7]));
      assert.equal(headers['X-RateLimit-Remaining'], 'name=default,0;');
      assert.equal(headers['Retry-After'], undefined);
    });

    it('rejects the 11th hit in a second on a 10/1second burst limit beside 100/1hour, and admits again in the next second', async () => {
      const rules: readonly LimitRule[] = [
        { name: 'default', limit: 100, windowMs: HOUR, hard: true },
        { name: 'burst', limit: 10, windowMs: 1000, hard: true },
      ];
      await awaitRoomInWindow(HOUR, 60_000);
      await awaitNextWindow(1000);
      const decisions = await Promise.all(Array.from({ length: 11 }, () => store.hit('burst', rules)));
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
      const rejected = decisions.find((d) => !d.allowed);
      assert.ok(rejected);
      assert.equal(rejected.results[1].exceeded, true);
      assert.equal(rejected.results[0].exceeded, false);
      const headers = headerMap(rateLimitHeaders(rejected));
      assert.equal(headers['X-RateLimit-Limit'], 'name=default,100;name=burst,10;');
      assert.equal(headers['X-RateLimit-Remaining'], 'name=default,90;name=burst,0;');
      assert.equal(headers['RateLimit-Policy'], '"default";q=100;w=3600, "burst";q=10;w=1');
      assert.equal(headers['RateLimit'], '"burst";r=0;t=1');
      assert.equal(headers['Retry-After'], '1');

      await sleep(rejected.results[1].resetMs + 20);
      const next = await store.hit('burst', rules);
      assert.equal(next.allowed, true);
      // The rejected hit pushed neither rule: 10 counted before, this one makes 11.
      assert.equal(next.results[0].count, 11);
      assert.equal(next.results[1].count, 1);
    });

    it('admits again once a short window rolls over', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 5, windowMs: 400, hard: true }];
      await awaitNextWindow(400);
      const first = await Promise.all(Array.from({ length: 6 }, () => store.hit('short', rules)));
      assert.equal(first.filter((d) => d.allowed).length, 5);
      const rejected = first.find((d) => !d.allowed);
      assert.ok(rejected);
      assert.ok(rejected.results[0].resetMs > 0 && rejected.results[0].resetMs <= 400);
      assert.equal(rejected.retryAfterSeconds, 1);

      await sleep(rejected.results[0].resetMs + 20);
      const next = await store.hit('short', rules);
      assert.equal(next.allowed, true);
      assert.equal(next.results[0].count, 1);
      assert.equal(next.results[0].remaining, 4);
    });

    it('counts keys independently', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 3, windowMs: HOUR, hard: true }];
      await awaitRoomInWindow(HOUR, 60_000);
      for (let i = 0; i < 3; i++) assert.equal((await store.hit('app-a', rules)).allowed, true);
      assert.equal((await store.hit('app-a', rules)).allowed, false);
      const other = await store.hit('app-b', rules);
      assert.equal(other.allowed, true);
      assert.equal(other.results[0].count, 1);
      assert.equal(other.results[0].remaining, 2);
    });

    it('admits exactly 100 of 500 concurrent hits against a limit of 100', async () => {
      const rules: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: HOUR, hard: true }];
      await awaitRoomInWindow(HOUR, 60_000);
      const decisions = await Promise.all(Array.from({ length: 500 }, () => store.hit('concurrent', rules)));
      const admitted = decisions.filter((d) => d.allowed);
      assert.equal(admitted.length, 100);
      assert.equal(decisions.filter((d) => d.backendError !== undefined).length, 0);
      const counts = admitted.map((d) => d.results[0].count).sort((a, b) => a - b);
      assert.deepEqual(
        counts,
        Array.from({ length: 100 }, (_, i) => i + 1),
        'each admitted hit saw its own count',
      );
    });

    it('keeps counting a limit across a republished rule set with the same name and window', async () => {
      const before: readonly LimitRule[] = [{ name: 'default', limit: 10, windowMs: HOUR, hard: true }];
      const after: readonly LimitRule[] = [{ name: 'default', limit: 10, windowMs: HOUR, hard: true }];
      await awaitRoomInWindow(HOUR, 60_000);
      await store.hit('republished', before);
      await store.hit('republished', before);
      const decision = await store.hit('republished', after);
      assert.equal(decision.results[0].count, 3);
    });
  });
}
