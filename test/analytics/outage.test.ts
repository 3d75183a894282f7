/**
 * issue-15: the sink while PostgreSQL is unreachable: one write in flight at a time, back-off,
 * one warning per outage and one "recovered" line, and a bounded queue whose drops show on
 * /metrics (prom-client's registry, which /metrics prints).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { register } from 'prom-client';
import { AnalyticsSink } from '../../src/analytics/sink.ts';
import { listEvents } from '../../src/store/analytics.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { openStore } from '../../src/store/store.ts';
import { postgresTestStore } from '../helpers/stores.ts';

function event(i: number): NewActivityEvent {
  return {
    ts: 1_700_000_000_000 + i,
    tx_id: `outage-${i}`,
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

/** A TCP relay to PostgreSQL that can be cut and opened again on the same port. */
async function pgRelay(target: URL): Promise<{ port: number; cut(): Promise<void>; open(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const open = async () => {
    server = net.createServer((inbound) => {
      const outbound = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    server.listen(port, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await open();
  return {
    port,
    open,
    async cut() {
      const closed = new Promise((resolve) => server!.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

async function droppedOnMetrics(): Promise<number> {
  const match = /^portico_analytics_events_dropped_total (\d+)$/m.exec(await register.metrics());
  return match ? Number(match[1]) : NaN;
}

describe('analytics sink: issue-15, PostgreSQL outage', () => {
  test(
    'one warning, one write in flight, a bounded queue with counted drops, one recovered line',
    { timeout: 60_000 },
    async () => {
      const db = await postgresTestStore();
      const relay = await pgRelay(new URL(db.url));
      const viaRelay = new URL(db.url);
      viaRelay.port = String(relay.port);
      const store = await openStore(viaRelay.toString());
      const lines: Array<{ level: number; msg: string }> = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const sink = new AnalyticsSink({
        store,
        databaseUrl: viaRelay.toString(),
        logger,
        batchSize: 100,
        flushMs: 50,
        maxQueued: 3000,
      });
      const droppedBefore = await droppedOnMetrics();
      try {
        await relay.cut();
        let inFlight = 0;
        let mostInFlight = 0;
        const writer = (sink as unknown as { batches: { write: (b: NewActivityEvent[]) => Promise<void> } }).batches;
        const write = writer.write;
        writer.write = async (batch) => {
          mostInFlight = Math.max(mostInFlight, ++inFlight);
          try {
            await write(batch);
          } finally {
            inFlight--;
          }
        };
        for (let i = 0; i < 5000; i++) {
          sink.record(event(i));
          if (i % 500 === 0) await sleep(100);
        }
        await sleep(1500);
        assert.equal(lines.filter((l) => l.level >= 40).length, 1, `issue-15: log lines while down: ${lines.length}`);
        assert.equal(mostInFlight, 1, 'one write in flight at a time');
        // A batch being retried at this moment is out of the queue: the bound applies to the rest.
        assert.ok(sink.pending <= 3000 && sink.pending >= 2900, `the queue is bounded: ${sink.pending}`);
        assert.ok(sink.dropped >= 1900, `dropped ${sink.dropped}`);
        assert.equal((await droppedOnMetrics()) - droppedBefore, sink.dropped, 'drops are counted on /metrics');

        await relay.open();
        const deadline = Date.now() + 15_000;
        // The queue empties when the last batch is taken, before its write commits: wait for both.
        while ((sink.pending > 0 || inFlight > 0) && Date.now() < deadline) await sleep(100);
        assert.equal(sink.pending, 0, 'written after the store came back');
        assert.equal(inFlight, 0, 'the last write has ended');
        assert.equal(
          (await listEvents(db.store.db, {}, 10_000)).length,
          5000 - sink.dropped,
          'every event not dropped is written',
        );
        assert.deepEqual(
          lines
            .filter((l) => l.level >= 30)
            .map((l) => l.msg)
            .slice(-1),
          ['analytics writes recovered'],
        );
        assert.equal(lines.filter((l) => l.level >= 30).length, 2, 'one warning and one recovered line per outage');
      } finally {
        await sink.close();
        await store.close();
        await relay.cut().catch(() => undefined);
        await db.dispose();
      }
    },
  );
});
