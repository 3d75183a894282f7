/**
 * A PostgreSQL that takes the connection but never answers (a paused server, a half-dead network
 * path), or one whose statements wait on a lock: the activity writes used to wait for ever, and
 * so did `close()`. Each write is now bounded (client-side query timeout, server-side statement
 * timeout, TCP keepalive on the analytics writes' own pool), a failed batch is logged and counted
 * (`portico_analytics_write_failures_total`) and kept for the retry, and `close()` returns
 * within its bound, saying how many events it could not write.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import pino from 'pino';
import { register } from 'prom-client';
import { AnalyticsSink } from '../../src/analytics/sink.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { openStore } from '../../src/store/store.ts';
import { postgresTestStore } from '../helpers/stores.ts';

function event(i: number): NewActivityEvent {
  return {
    ts: 1_700_000_000_000 + i,
    tx_id: `frozen-${i}`,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: 'a',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/x',
    status: 200,
    latency_ms: 1,
    backend_ms: 1,
    client_id: 'c',
    app_id: 'a',
    app_name: 'App',
    consumer_org_name: 'devs',
    product_name: 'p',
    plan_name: 'default',
    error_name: '',
    content: 'activity',
  };
}

/** A TCP relay to PostgreSQL that can freeze: connections stay open, nothing goes through either way. */
async function freezingRelay(target: URL): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  let frozen = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port || 5432), target.hostname);
    const pair = [inbound, outbound];
    for (const [from, to] of [pair, [...pair].reverse()]) {
      sockets.add(from);
      from.on('data', (chunk) => void (frozen || to.write(chunk)));
      from.on('close', () => {
        sockets.delete(from);
        to.destroy();
      });
      from.on('error', () => to.destroy());
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = new URL(target);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => void (frozen = true),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function failuresOnMetrics(): Promise<number> {
  const match = /^portico_analytics_write_failures_total (\d+)$/m.exec(await register.metrics());
  return match ? Number(match[1]) : NaN;
}

/** Resolves with how long `work` took; rejects when it takes more than `ms`. */
async function within(ms: number, what: string, work: Promise<unknown>): Promise<number> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - started;
}

function capturedLogger() {
  const lines: Array<{ level: number; msg: string; lost?: number }> = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
}

describe('analytics sink: a PostgreSQL that does not answer', () => {
  test(
    'a frozen server: the write fails within its bound (logged, counted), and close() returns, naming what it lost',
    {
      timeout: 60_000,
    },
    async () => {
      const db = await postgresTestStore();
      const relay = await freezingRelay(new URL(db.url));
      // The gateway's store goes through the relay too: whichever pool the writes take freezes.
      const store = await openStore(relay.url);
      const { logger, lines } = capturedLogger();
      const sink = new AnalyticsSink({
        store,
        databaseUrl: relay.url,
        logger,
        batchSize: 100,
        flushMs: 60_000,
        writeTimeoutMs: 500,
        closeTimeoutMs: 1500,
      });
      const failuresBefore = await failuresOnMetrics();
      try {
        for (let i = 0; i < 10; i++) sink.record(event(i));
        await sink.flush();
        assert.equal(sink.written, 10, 'written while the server answers');
        relay.freeze();
        for (let i = 10; i < 60; i++) sink.record(event(i));
        await within(5000, 'flush() on a frozen server', sink.flush());
        assert.equal(sink.pending, 50, 'the batch is kept for the retry');
        assert.ok((await failuresOnMetrics()) > failuresBefore, 'the failure is counted');
        assert.deepEqual(
          lines.filter((l) => l.level >= 40).map((l) => l.msg),
          ['analytics events not written; holding them and retrying with back-off'],
        );
        const took = await within(5000, 'close() on a frozen server', sink.close());
        assert.ok(took <= 2500, `close() took ${took} ms`);
        const stop = lines.find((l) => l.msg === 'analytics events not written at stop: the store is unreachable');
        assert.equal(stop?.lost, 50);
        assert.equal(sink.dropped, 50);
        assert.equal(sink.written, 10);
      } finally {
        await within(5000, 'close()', sink.close()).catch(() => undefined);
        await relay.close();
        await store.close();
        await db.dispose();
      }
    },
  );

  test(
    'statements waiting on a lock another session holds: the write gives up at its statement timeout, and the retry writes the batch once',
    {
      timeout: 60_000,
    },
    async () => {
      const db = await postgresTestStore();
      const locker = new pg.Client({ connectionString: db.url });
      await locker.connect();
      const { logger } = capturedLogger();
      const sink = new AnalyticsSink({
        store: db.store,
        databaseUrl: db.url,
        logger,
        batchSize: 100,
        flushMs: 50,
        writeTimeoutMs: 500,
      });
      try {
        await locker.query('begin');
        await locker.query('lock table activity_rollup in access exclusive mode');
        for (let i = 0; i < 30; i++) sink.record(event(i));
        await within(5000, 'flush() while the rollups are locked', sink.flush());
        assert.equal(sink.pending, 30);
        await locker.query('rollback');
        // The queue empties when the retry takes the batch, before it commits: wait for the commit.
        const deadline = Date.now() + 15_000;
        while (sink.written < 30 && Date.now() < deadline) await sleep(50);
        assert.equal(sink.written, 30, 'written by the retry once the lock is gone');
        assert.equal(sink.pending, 0);
        const calls = await db.store.db.selectFrom('activity_rollup').select('calls').execute();
        assert.equal(
          calls.reduce((sum, row) => sum + Number(row.calls), 0),
          30,
        );
      } finally {
        await sink.close();
        await locker.end();
        await db.dispose();
      }
    },
  );
});
