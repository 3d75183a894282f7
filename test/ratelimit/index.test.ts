/**
 * Backend choice and plan limits → counter rules.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCounterStore, rulesFromPlan } from '../../src/ratelimit/index.ts';
import type { PlanLimit } from '../../src/ratelimit/index.ts';
import { REDIS_URL, deleteRedisKeys, freshKeyPrefix } from './helpers.ts';

const silverDefault: PlanLimit = {
  name: 'default',
  unlimited: false,
  count: 100,
  windowMs: 3_600_000,
  hardLimit: true,
};

describe('rulesFromPlan', () => {
  it('turns plan rate limits into rules, keeping hard and soft as the plan says', () => {
    const soft: PlanLimit = {
      name: 'daily',
      unlimited: false,
      count: 1000,
      windowMs: 86_400_000,
      hardLimit: false,
    };
    assert.deepEqual(rulesFromPlan([silverDefault, soft], []), [
      { name: 'default', limit: 100, windowMs: 3_600_000, hard: true },
      { name: 'daily', limit: 1000, windowMs: 86_400_000, hard: false },
    ]);
  });

  it('drops unlimited limits, so an unlimited plan has no rules', () => {
    const unlimited: PlanLimit = {
      name: 'default',
      unlimited: true,
      count: 0,
      windowMs: 0,
      hardLimit: false,
    };
    assert.deepEqual(rulesFromPlan([unlimited], [unlimited]), []);
  });

  it('makes burst limits hard, named as in the plan, after the rate limits', () => {
    const burst: PlanLimit = {
      name: 'Default burst-limit',
      unlimited: false,
      count: 10,
      windowMs: 1000,
      hardLimit: false,
    };
    assert.deepEqual(rulesFromPlan([silverDefault], [burst]), [
      { name: 'default', limit: 100, windowMs: 3_600_000, hard: true },
      { name: 'Default burst-limit', limit: 10, windowMs: 1000, hard: true },
    ]);
  });

  it('returns a frozen rule set, safe to share across requests and cache by identity', () => {
    const rules = rulesFromPlan([silverDefault]);
    assert.ok(Object.isFrozen(rules));
    assert.ok(Object.isFrozen(rules[0]));
  });
});

describe('createCounterStore', () => {
  it('uses in-process memory when no Redis URL is set', async () => {
    const store = createCounterStore({ failOpen: true });
    assert.equal(store.kind, 'memory');
    assert.equal(typeof store.hitSync, 'function');
    await store.close();
  });

  it('uses Redis when a Redis URL is set', async () => {
    const keyPrefix = freshKeyPrefix('factory');
    const store = createCounterStore({ redisUrl: REDIS_URL, failOpen: false, keyPrefix });
    try {
      assert.equal(store.kind, 'redis');
      const decision = await store.hit('k', rulesFromPlan([silverDefault]));
      assert.equal(decision.backendError, undefined);
      assert.equal(decision.results[0].count, 1);
    } finally {
      await store.close();
      await deleteRedisKeys(keyPrefix);
    }
  });
});
