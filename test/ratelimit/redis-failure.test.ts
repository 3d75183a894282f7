/**
 * The Redis store when Redis is down, silent or comes back: fail open/closed without hanging,
 * and one log line per outage transition.
 */

import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { rateLimitHeaders } from '../../src/ratelimit/headers.ts';
import { createRedisCounterStore } from '../../src/ratelimit/redis.ts';
import type { LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { REDIS_URL, deleteRedisKeys, freshKeyPrefix, headerMap } from './helpers.ts';
import { startPrivateRedis } from './private-redis.ts';

const CLOSED_PORT_URL = 'redis://127.0.0.1:1';
const RULES: readonly LimitRule[] = [{ name: 'default', limit: 100, windowMs: 3_600_000, hard: true }];
/** Generous for a loaded 2-core machine; the store's own bounds are its timeout per call, 1 s at start. */
const BOUND_MS = 5_000;

interface LogLine {
  level: number;
  msg: string;
}

/** A real pino logger writing into an array. */
function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}

const warnings = (lines: LogLine[]) => lines.filter((l) => l.level === 40);
const infos = (lines: LogLine[]) => lines.filter((l) => l.level === 30);

async function timedHits(
  hit: () => Promise<LimitDecision>,
  n: number,
): Promise<{ decisions: LimitDecision[]; slowestMs: number }> {
  const decisions: LimitDecision[] = [];
  let slowestMs = 0;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    decisions.push(await hit());
    slowestMs = Math.max(slowestMs, performance.now() - started);
  }
  return { decisions, slowestMs };
}

/** A TCP relay to the real Redis that can be cut and restored, to stage an outage. */
async function startRelay(port = 0): Promise<{ port: number; stop(): Promise<void> }> {
  const upstream = new URL(REDIS_URL);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const redis = net.connect(Number(upstream.port || 6379), upstream.hostname);
    for (const s of [client, redis]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        redis.destroy();
      });
    }
    client.pipe(redis).pipe(client);
  });
  server.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('counter store: redis, when Redis fails', () => {
  it('admits with backendError when Redis is unreachable and failOpen is true, within bounded time', async () => {
    const { logger, lines } = capturingLogger();
    const store = createRedisCounterStore({ url: CLOSED_PORT_URL, failOpen: true, logger });
    try {
      const { decisions, slowestMs } = await timedHits(() => store.hit('down-open', RULES), 20);
      assert.ok(slowestMs < BOUND_MS, `slowest hit took ${slowestMs} ms`);
      for (const d of decisions) {
        assert.equal(d.allowed, true);
        assert.match(d.backendError ?? '', /redis/);
      }
      assert.deepEqual(rateLimitHeaders(decisions[0]), []);
    } finally {
      await store.close();
    }
    assert.equal(warnings(lines).length, 1, 'one warning per outage, not per request');
    assert.match(warnings(lines)[0].msg, /failing open/);
    assert.equal(infos(lines).length, 0);
  });

  it('rejects with backendError and Retry-After when Redis is unreachable and failOpen is false, within bounded time', async () => {
    const { logger, lines } = capturingLogger();
    const store = createRedisCounterStore({ url: CLOSED_PORT_URL, failOpen: false, logger });
    try {
      const { decisions, slowestMs } = await timedHits(() => store.hit('down-closed', RULES), 20);
      assert.ok(slowestMs < BOUND_MS, `slowest hit took ${slowestMs} ms`);
      for (const d of decisions) {
        assert.equal(d.allowed, false);
        assert.match(d.backendError ?? '', /redis/);
      }
      assert.deepEqual(headerMap(rateLimitHeaders(decisions[0])), { 'Retry-After': '1' });
      // Reconnect attempts go on in the background; they must not log again.
      await sleep(500);
    } finally {
      await store.close();
    }
    assert.equal(warnings(lines).length, 1);
    assert.match(warnings(lines)[0].msg, /failing closed/);
  });

  it('issue-15: a connection still being set up at start is slow, not down: calls are rejected, never admitted uncounted (failOpen true)', async () => {
    // Accepts TCP and never answers: ioredis stays in its handshake (no error), as a Redis on a
    // starved machine does right after a gateway starts.
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const { logger } = capturingLogger();
    const store = createRedisCounterStore({ url, failOpen: true, timeoutMs: 200, logger });
    try {
      const { decisions, slowestMs } = await timedHits(() => store.hit('connecting', RULES), 5);
      assert.ok(slowestMs < BOUND_MS, `slowest hit took ${slowestMs} ms`);
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [false, false, false, false, false],
      );
      assert.match(decisions[0].backendError ?? '', /being set up/);
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  for (const failOpen of [true, false]) {
    it(
      `issue-15: a frozen Redis gets calls rejected, never admitted uncounted, and charges none of them later (failOpen ${failOpen})`,
      { timeout: 30_000 },
      async () => {
        const redis = await startPrivateRedis();
        const { logger, lines } = capturingLogger();
        const store = createRedisCounterStore({
          url: redis.url,
          failOpen,
          timeoutMs: 200,
          logger,
          keyPrefix: 'frozen:',
        });
        let decisions: LimitDecision[] = [];
        try {
          assert.equal((await store.hit('warm-up', RULES)).backendError, undefined);
          redis.freeze();
          const timed = await timedHits(() => store.hit('frozen', RULES), 10);
          redis.thaw();
          decisions = timed.decisions;
          assert.ok(timed.slowestMs < BOUND_MS, `slowest hit took ${timed.slowestMs} ms`);
          assert.deepEqual(
            decisions.map((d) => d.allowed),
            new Array(10).fill(false),
            'a slow reply is never admitted uncounted',
          );
          await sleep(300);
          // Each rejected call put a command on the socket; Redis ran them when it resumed.
          const after = await store.hit('frozen', RULES);
          assert.equal(after.allowed, true);
          assert.equal(after.results[0].count, 1, 'issue-15: the calls rejected while Redis was frozen were charged');
          assert.equal(headerMap(rateLimitHeaders(after))['X-RateLimit-Remaining'], 'name=default,99;');
        } finally {
          await store.close();
        }
        const raw = new Redis(redis.url);
        try {
          const values = await Promise.all((await raw.keys('frozen:{frozen}*')).map((key) => raw.get(key)));
          assert.deepEqual(
            values,
            ['1'],
            'after close, Redis holds exactly the one admitted hit (unused lease hits given back)',
          );
        } finally {
          raw.disconnect();
          await redis.stop();
        }
        for (const d of decisions) assert.match(d.backendError ?? '', /no answer within 200 ms/);
        assert.equal(warnings(lines).length, 1, 'one warning while Redis is slow, not one per call');
      },
    );
  }

  it(
    'issue-15: a gateway whose event loop stalls past the timeout admits nothing over the limit',
    { timeout: 30_000 },
    async () => {
      const keyPrefix = freshKeyPrefix('stall');
      const store = createRedisCounterStore({ url: REDIS_URL, failOpen: true, timeoutMs: 200, keyPrefix });
      try {
        const limit: readonly LimitRule[] = [{ name: 'default', limit: 20, windowMs: 3_600_000, hard: true }];
        let admitted = 0;
        for (let i = 0; i < 40; i++) if ((await store.hit('stall', limit)).allowed) admitted++;
        assert.equal(admitted, 20);
        const pending = Promise.all(Array.from({ length: 50 }, () => store.hit('stall', limit)));
        // The replies arrive while the loop is busy; the timers are due before the socket is read.
        const until = performance.now() + 300;
        while (performance.now() < until);
        const decisions = await pending;
        assert.equal(
          decisions.filter((d) => d.allowed).length,
          0,
          'issue-15: calls admitted uncounted after a 300 ms stall',
        );
      } finally {
        await store.close();
        await deleteRedisKeys(keyPrefix);
      }
    },
  );

  it(
    'logs one warning when Redis goes away and one info when it is back, and counts on',
    { timeout: 30_000 },
    async () => {
      const keyPrefix = freshKeyPrefix('outage');
      let relay = await startRelay();
      const { logger, lines } = capturingLogger();
      const store = createRedisCounterStore({
        url: `redis://127.0.0.1:${relay.port}`,
        failOpen: true,
        logger,
        keyPrefix,
        leaseMax: 1,
      });
      try {
        const up = await store.hit('outage', RULES);
        assert.equal(up.backendError, undefined);
        assert.equal(up.results[0].count, 1);

        await relay.stop();
        const { decisions } = await timedHits(() => store.hit('outage', RULES), 10);
        assert.ok(decisions.every((d) => d.allowed && d.backendError !== undefined));
        assert.equal(warnings(lines).length, 1);
        assert.equal(infos(lines).length, 0);

        relay = await startRelay(relay.port);
        let back: LimitDecision | undefined;
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
          const d = await store.hit('outage', RULES);
          if (d.backendError === undefined) {
            back = d;
            break;
          }
          await sleep(100);
        }
        assert.ok(back, 'Redis is used again after it comes back');
        assert.equal(back.results[0].count, 2, 'hits during the outage were not counted, earlier ones kept');
        assert.equal(warnings(lines).length, 1);
        assert.equal(infos(lines).length, 1);
        assert.match(infos(lines)[0].msg, /available again/);
      } finally {
        await store.close();
        await relay.stop();
        await deleteRedisKeys(keyPrefix);
      }
    },
  );
  it(
    'an error reply from a connected Redis (OOM, READONLY) gets calls rejected, never failed open; a lost connection still fails open',
    { timeout: 30_000 },
    async () => {
      const redis = await startPrivateRedis();
      const admin = new Redis(redis.url);
      const { logger, lines } = capturingLogger();
      const store = createRedisCounterStore({
        url: redis.url,
        failOpen: true,
        logger,
        keyPrefix: 'refused:',
        leaseMax: 1,
      });
      const limit: readonly LimitRule[] = [{ name: 'default', limit: 5, windowMs: 3_600_000, hard: true }];
      let stopped = false;
      try {
        assert.equal((await store.hit('refused', limit)).results[0].count, 1);
        for (const [setup, undo, reply] of [
          [['config', 'set', 'maxmemory', '1'], ['config', 'set', 'maxmemory', '0'], /OOM/],
          [['replicaof', '127.0.0.1', '1'], ['replicaof', 'no', 'one'], /READONLY/],
        ] as const) {
          await admin.call(setup[0], ...setup.slice(1));
          const { decisions, slowestMs } = await timedHits(() => store.hit('refused', limit), 20);
          assert.ok(slowestMs < BOUND_MS, `slowest hit took ${slowestMs} ms`);
          assert.equal(decisions.filter((d) => d.allowed).length, 0, `${reply}: admitted uncounted`);
          for (const d of decisions) {
            assert.match(d.backendError ?? '', reply);
            assert.deepEqual(headerMap(rateLimitHeaders(d)), { 'Retry-After': '1' });
          }
          assert.equal(store.health!().reachable, true, 'a connected Redis stays reachable');
          await admin.call(undo[0], ...undo.slice(1));
          const after = await store.hit('refused', limit);
          assert.equal(after.backendError, undefined);
          assert.equal(after.allowed, true);
        }
        const counted = await store.hit('refused', limit);
        assert.equal(counted.results[0].count, 4, 'refused calls counted nothing; admitted ones all counted');
        assert.equal(warnings(lines).length, 2, 'one warning per episode, not per call');
        assert.match(warnings(lines)[0].msg, /refusing/);
        assert.equal(infos(lines).length, 2);

        admin.disconnect();
        await redis.stop();
        stopped = true;
        const { decisions } = await timedHits(() => store.hit('refused', limit), 5);
        assert.ok(
          decisions.every((d) => d.allowed && d.backendError !== undefined),
          'a lost connection fails open',
        );
        assert.equal(store.health!().reachable, false);
        assert.match(warnings(lines).at(-1)!.msg, /failing open/);
      } finally {
        await store.close();
        admin.disconnect();
        // stop() waits for an exit that already happened once the server was killed.
        if (!stopped) await redis.stop();
      }
    },
  );
});
