/**
 * A batch written again — its commit landed but the answer was lost, so the sink tried it once
 * more — must not count its calls twice. Each event is keyed by its time and the gateway's
 * transaction id (unique in `activity_calls`): a call already stored is skipped, and only the
 * calls inserted add to the rollups, in the same transaction. Every writer: the pool
 * (PostgreSQL), the event loop (in-memory SQLite), the writer thread (SQLite file).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { AnalyticsSink } from '../../src/analytics/sink.ts';
import { insertEvents, insertEventsSqlite } from '../../src/store/analytics-writes.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import type { Store } from '../../src/store/store.ts';
import { openStore } from '../../src/store/store.ts';
import { postgresTestStore, sqliteTestStore, storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const quiet = pino({ level: 'silent' });

function event(i: number): NewActivityEvent {
  return {
    ts: 1_700_000_000_000 + i * 1000,
    tx_id: `tx-${i}`,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: i % 2 ? 'odd' : 'even',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/x',
    status: i % 5 === 0 ? 500 : 200,
    latency_ms: i % 50,
    backend_ms: 1,
    client_id: 'c',
    app_id: 'a',
    app_name: 'App',
    consumer_org_id: 'corg',
    consumer_org_name: 'Devs',
    subscription_id: 'sub-1',
    plan_id: 'plan-1',
    product_name: 'p',
    plan_name: 'gold',
    error_name: '',
    content: 'activity',
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => event(from + k));

/** Calls stored, and the calls, latency sum and plan-counted calls the rollups hold. */
async function counted(store: Store): Promise<{ events: number; rolledUp: number; latency: number }> {
  const events = await store.db
    .selectFrom('activity_calls')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const rollups = await store.db.selectFrom('activity_rollup').select(['calls', 'latency_sum']).execute();
  return {
    events: Number(events.n),
    rolledUp: rollups.reduce((sum, row) => sum + Number(row.calls), 0),
    latency: rollups.reduce((sum, row) => sum + Number(row.latency_sum), 0),
  };
}

const latencyOf = (events: NewActivityEvent[]) => events.reduce((sum, e) => sum + e.latency_ms, 0);

describe('activity writes are idempotent per transaction id', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: a batch written twice is stored and rolled up once; one overlapping it adds only its new calls`, async () => {
      const t = await backend.open();
      try {
        await t.store.transaction((trx) => insertEvents(trx, range(0, 100)));
        await t.store.transaction((trx) => insertEvents(trx, range(0, 100)));
        assert.deepEqual(await counted(t.store), { events: 100, rolledUp: 100, latency: latencyOf(range(0, 100)) });
        await t.store.transaction((trx) => insertEvents(trx, range(50, 150)));
        assert.deepEqual(await counted(t.store), { events: 150, rolledUp: 150, latency: latencyOf(range(0, 150)) });
      } finally {
        await t.dispose();
      }
    });
  }

  test('in-memory SQLite, prepared statements: the same', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      insertEventsSqlite(store.sqlite!, range(0, 100));
      insertEventsSqlite(store.sqlite!, range(0, 100));
      insertEventsSqlite(store.sqlite!, range(50, 150));
      assert.deepEqual(await counted(store), { events: 150, rolledUp: 150, latency: latencyOf(range(0, 150)) });
    } finally {
      await store.close();
    }
  });

  test('SQLite file, writer thread: events recorded again are stored and rolled up once', async () => {
    const t = await sqliteTestStore();
    const sink = new AnalyticsSink({ store: t.store, logger: quiet, batchSize: 100, flushMs: 60_000 });
    try {
      for (const e of range(0, 100)) sink.record(e);
      await sink.flush();
      for (const e of range(50, 150)) sink.record(e);
      await sink.flush();
      assert.equal(sink.pending, 0);
      assert.deepEqual(await counted(t.store), { events: 150, rolledUp: 150, latency: latencyOf(range(0, 150)) });
    } finally {
      await sink.close();
      await t.dispose();
    }
  });

  test('PostgreSQL pool: a batch whose commit landed but whose answer was lost is retried, and counted once', async () => {
    const t: TestStore = await postgresTestStore();
    const sink = new AnalyticsSink({
      store: t.store,
      databaseUrl: t.url,
      logger: quiet,
      batchSize: 100,
      flushMs: 60_000,
    });
    try {
      const target = (sink as unknown as { batches: { write: (batch: NewActivityEvent[]) => Promise<void> } }).batches;
      const write = target.write;
      const attempts: number[] = [];
      target.write = async (batch) => {
        attempts.push(batch.length);
        await write(batch);
        if (attempts.length === 1) throw new Error('Connection terminated unexpectedly');
      };
      for (const e of range(0, 100)) sink.record(e);
      // The failed attempt puts the batch back; the flush writes it again at once.
      await sink.flush();
      assert.deepEqual(attempts, [100, 100], 'the batch was written twice');
      assert.equal(sink.pending, 0);
      assert.deepEqual(await counted(t.store), { events: 100, rolledUp: 100, latency: latencyOf(range(0, 100)) });
    } finally {
      await sink.close();
      await t.dispose();
    }
  });
});
