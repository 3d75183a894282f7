/**
 * issue 15, "exact by construction", reproduced deterministically on the real Redis:
 *
 * - A burst across a window boundary: windows are fixed and aligned, so such a burst admits the
 *   limit in each window it touches — twice the limit in a few seconds — and never more than the
 *   limit in one window. (This is what made test/cluster/exact-limits.test.ts once count 200 on
 *   its 100/hour plan: a burst that ran across hh:00:00 UTC.)
 * - Replies held back, or commands held back, past the store's deadline by a TCP relay the test
 *   controls (what a stalled gateway process or a slow network does to a grant): calls are
 *   rejected while it lasts, a late grant becomes a lease and is not lost, a late command counts
 *   nothing, and the hits admitted are exactly what Redis counted.
 */

import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createRedisCounterStore } from '../../src/ratelimit/redis.ts';
import type { CounterStore, LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { REDIS_URL, awaitNextWindow, deleteRedisKeys, freshKeyPrefix } from './helpers.ts';

/** Which way the relay holds data back. */
type Direction = 'replies' | 'commands';

interface DelayRelay {
  port: number;
  /** Holds every chunk going `direction` back for `ms` (0: straight through), order kept. */
  delay(direction: Direction, ms: number): void;
  stop(): Promise<void>;
}

/** A TCP relay to the real Redis that can hold back either direction, keeping byte order. */
async function startDelayRelay(): Promise<DelayRelay> {
  const upstream = new URL(REDIS_URL);
  const held: Record<Direction, number> = { replies: 0, commands: 0 };
  const sockets = new Set<net.Socket>();
  const pipe = (from: net.Socket, to: net.Socket, direction: Direction) => {
    let chain = Promise.resolve();
    let lastAt = 0;
    from.on('data', (chunk: Buffer) => {
      const at = Math.max(Date.now() + held[direction], lastAt);
      lastAt = at;
      chain = chain.then(async () => {
        const wait = at - Date.now();
        if (wait > 0) await sleep(wait);
        if (!to.destroyed) to.write(chunk);
      });
    });
  };
  const server = net.createServer((client) => {
    const redis = net.connect(Number(upstream.port || 6379), upstream.hostname);
    for (const s of [client, redis]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        redis.destroy();
      });
    }
    pipe(client, redis, 'commands');
    pipe(redis, client, 'replies');
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    delay(direction, ms) {
      held[direction] = ms;
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The window (index since the epoch) a decision's count belongs to: its reset is that window's end. */
function windowOf(decision: LimitDecision, windowMs: number, at: number): number {
  return Math.round((at + decision.results[0].resetMs) / windowMs) - 1;
}

async function windowCount(keyPrefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${keyPrefix}*`);
    const values = keys.length === 0 ? [] : await redis.mget(...keys);
    return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
  } finally {
    await redis.quit();
  }
}

describe('counter store: redis, exact under stress (issue 15)', () => {
  it(
    'a burst across a window boundary admits the limit in each window, never more in one',
    { timeout: 60_000 },
    async () => {
      const windowMs = 4000;
      const rules: readonly LimitRule[] = Object.freeze([{ name: 'default', limit: 20, windowMs, hard: true }]);
      const keyPrefix = freshKeyPrefix('boundary');
      const stores = [0, 1, 2].map(() => createRedisCounterStore({ url: REDIS_URL, failOpen: true, keyPrefix }));
      try {
        // Start half a window before a boundary, stop half a window after it: one boundary crossed.
        await awaitNextWindow(windowMs);
        await sleep(windowMs / 2);
        const until = Date.now() + windowMs;
        const perWindow = new Map<number, number>();
        let uncounted = 0;
        for (let i = 0; Date.now() < until; i++) {
          const decisions = await Promise.all(stores.map((s) => s.hit('burst', rules)));
          const at = Date.now();
          for (const d of decisions) {
            if (!d.allowed) continue;
            if (d.results.length === 0) uncounted++;
            else perWindow.set(windowOf(d, windowMs, at), (perWindow.get(windowOf(d, windowMs, at)) ?? 0) + 1);
          }
          await sleep(5);
        }
        const tally = JSON.stringify(Object.fromEntries(perWindow));
        assert.equal(uncounted, 0, 'no call admitted without a count');
        assert.equal(perWindow.size, 2, `the burst crossed one boundary: ${tally}`);
        for (const [window, n] of perWindow) assert.equal(n, 20, `window ${window} admitted ${n}: ${tally}`);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await deleteRedisKeys(keyPrefix);
      }
    },
  );

  for (const direction of ['replies', 'commands'] as const) {
    it(
      `${direction} held back past the deadline: nothing admitted uncounted, admitted = counted = the limit`,
      { timeout: 60_000 },
      async () => {
        const limit = 30;
        const rules: readonly LimitRule[] = Object.freeze([
          { name: 'default', limit, windowMs: 3_600_000, hard: true },
        ]);
        const keyPrefix = freshKeyPrefix(`held-${direction}`);
        const relay = await startDelayRelay();
        const url = `redis://127.0.0.1:${relay.port}`;
        const stores: CounterStore[] = [0, 1, 2].map(() =>
          createRedisCounterStore({ url, failOpen: true, timeoutMs: 200, keyPrefix }),
        );
        let admitted = 0;
        let uncounted = 0;
        let slow = 0;
        const round = async (perStore: number) => {
          const calls = stores.flatMap((s) => Array.from({ length: perStore }, () => s.hit('held', rules)));
          for (const d of await Promise.all(calls)) {
            if (d.allowed) admitted++;
            if (d.allowed && d.results.length === 0) uncounted++;
            if (d.backendError !== undefined) slow++;
          }
        };
        try {
          await round(1); // connections up, clock offsets measured with no delay
          relay.delay(direction, 600);
          for (let i = 0; i < 5; i++) {
            await round(4);
            await sleep(250);
          }
          assert.ok(slow > 0, 'some calls found Redis slow while the relay held data back');
          assert.ok(admitted <= limit, `admitted ${admitted} of a limit of ${limit} while held back`);
          relay.delay(direction, 0);
          await sleep(700); // what was held back arrives
          for (let i = 0; i < 10; i++) await round(4);
          assert.equal(uncounted, 0, 'no call admitted without a count');
          assert.equal(admitted, limit, `admitted ${admitted} on a limit of ${limit}`);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
          await relay.stop();
        }
        assert.equal(await windowCount(keyPrefix), admitted, 'Redis holds exactly the admitted hits after close');
        await deleteRedisKeys(keyPrefix);
      },
    );
  }
});
