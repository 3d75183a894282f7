/**
 * Header formatting from decisions made by the memory store (no network needed).
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rateLimitHeaders } from '../../src/ratelimit/headers.ts';
import { createMemoryCounterStore } from '../../src/ratelimit/memory.ts';
import type { LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { headerMap } from './helpers.ts';

/** Memory store on a fixed clock, so resets (and `t`) are known exactly. */
function storeAt(nowMs: number) {
  return createMemoryCounterStore({ now: () => nowMs });
}

describe('rate-limit headers', () => {
  it('repeats name=<limit>,<n>; entries for several limits in one API Connect header value', async () => {
    const rules: readonly LimitRule[] = [
      { name: 'default', limit: 100, windowMs: 3_600_000, hard: true },
      { name: 'burst', limit: 10, windowMs: 1000, hard: true },
    ];
    const store = storeAt(3_600_000 * 10 + 600_000);
    const headers = headerMap(rateLimitHeaders(await store.hit('k', rules)));
    await store.close();
    assert.equal(headers['X-RateLimit-Limit'], 'name=default,100;name=burst,10;');
    assert.equal(headers['X-RateLimit-Remaining'], 'name=default,99;name=burst,9;');
  });

  it('lists every policy in RateLimit-Policy and reports the one with the least quota left in RateLimit', async () => {
    const rules: readonly LimitRule[] = [
      { name: 'default', limit: 100, windowMs: 3_600_000, hard: true },
      { name: 'burst', limit: 10, windowMs: 1000, hard: true },
    ];
    // 10 minutes into the hour, 250 ms into the second.
    const store = storeAt(3_600_000 * 10 + 600_250);
    const headers = headerMap(rateLimitHeaders(await store.hit('k', rules)));
    await store.close();
    assert.equal(headers['RateLimit-Policy'], '"default";q=100;w=3600, "burst";q=10;w=1');
    assert.equal(headers['RateLimit'], '"burst";r=9;t=1');
  });

  it('reports the blocking hard limit in RateLimit and Retry-After when rejected', async () => {
    const rules: readonly LimitRule[] = [
      { name: 'default', limit: 2, windowMs: 3_600_000, hard: true },
      { name: 'burst', limit: 10, windowMs: 1000, hard: true },
    ];
    // 3000 s left in the hour.
    const store = storeAt(3_600_000 * 10 + 600_000);
    await store.hit('k', rules);
    await store.hit('k', rules);
    const rejected = await store.hit('k', rules);
    await store.close();
    assert.equal(rejected.allowed, false);
    const headers = headerMap(rateLimitHeaders(rejected));
    assert.equal(headers['RateLimit'], '"default";r=0;t=3000');
    assert.equal(headers['Retry-After'], '3000');
  });

  it('rounds sub-second windows up to 1 second in w (the draft has no sub-second precision)', async () => {
    const rules: readonly LimitRule[] = [{ name: 'tiny', limit: 3, windowMs: 250, hard: true }];
    const store = storeAt(1_000_000);
    const headers = headerMap(rateLimitHeaders(await store.hit('k', rules)));
    await store.close();
    assert.equal(headers['RateLimit-Policy'], '"tiny";q=3;w=1');
  });

  it('escapes quotes and backslashes in policy names and keeps header values free of control characters', async () => {
    const rules: readonly LimitRule[] = [
      { name: 'a "b"\\c\r\nX-Injected: 1', limit: 5, windowMs: 60_000, hard: false },
    ];
    const store = storeAt(1_000_000);
    const headers = rateLimitHeaders(await store.hit('k', rules));
    await store.close();
    const map = headerMap(headers);
    assert.equal(map['RateLimit-Policy'], '"a \\"b\\"\\\\c__X-Injected: 1";q=5;w=60');
    assert.equal(map['X-RateLimit-Limit'], 'name=a "b"\\c__X-Injected: 1,5;');
    for (const [, value] of headers) assert.doesNotMatch(value, /[\r\n]/);
  });

  it('gives only Retry-After when the backend failed closed, and nothing when it failed open', () => {
    const rules: readonly LimitRule[] = [{ name: 'default', limit: 5, windowMs: 60_000, hard: true }];
    const closed: LimitDecision = {
      allowed: false,
      results: [],
      rules,
      backendError: 'down',
      retryAfterSeconds: 1,
    };
    const open: LimitDecision = { allowed: true, results: [], rules, backendError: 'down' };
    assert.deepEqual(rateLimitHeaders(closed), [['Retry-After', '1']]);
    assert.deepEqual(rateLimitHeaders(open), []);
  });

  it('formats decisions that do not carry their rule set', async () => {
    const rules: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: 3_600_000, hard: true }];
    const store = storeAt(3_600_000 * 10);
    const { allowed, results } = await store.hit('k', rules);
    await store.close();
    const headers = headerMap(rateLimitHeaders({ allowed, results }));
    assert.equal(headers['X-RateLimit-Limit'], 'name=default,100;');
    assert.equal(headers['RateLimit'], '"default";r=99;t=3600');
  });
});
