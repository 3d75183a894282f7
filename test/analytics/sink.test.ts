import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { register } from 'prom-client';
import { AnalyticsSink, eventsPerHandOff } from '../../src/analytics/sink.ts';
import type { WriterReport } from '../../src/analytics/sqlite-writer.ts';
import { listEvents } from '../../src/store/analytics.ts';
import { maxKnownScopes } from '../../src/store/analytics-writes.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { openStore } from '../../src/store/store.ts';
import { postgresTestStore, sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

function event(i: number): NewActivityEvent {
  return {
    ts: 1_700_000_000_000 + i,
    tx_id: `tx-${i}`,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: i % 2 ? 'odd' : 'even',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/x',
    status: 200,
    latency_ms: 1.5,
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

const quiet = pino({ level: 'silent' });

async function stored(t: TestStore): Promise<{ events: number; rolledUp: number }> {
  const events = (await listEvents(t.store.db, {}, 10_000)).length;
  const rollups = await t.store.db.selectFrom('activity_rollup').select('calls').execute();
  return { events, rolledUp: rollups.reduce((sum, row) => sum + Number(row.calls), 0) };
}

/**
 * The size of every batch the sink commits, in order: on a SQLite file as the writer thread
 * reports its transactions (it collects the batches from the chunks it is handed), elsewhere
 * as the sink writes them.
 */
function watchBatches(sink: AnalyticsSink): number[] {
  const sizes: number[] = [];
  if (sink.writer === 'thread') {
    const target = sink as unknown as { threadReported: (report: WriterReport) => void };
    const reported = target.threadReported.bind(sink);
    target.threadReported = (report) => {
      sizes.push(...report.committed);
      reported(report);
    };
    return sizes;
  }
  const target = (sink as unknown as { batches: { write: (batch: NewActivityEvent[]) => Promise<void> | void } })
    .batches;
  const write = target.write;
  target.write = (batch) => {
    sizes.push(batch.length);
    return write(batch);
  };
  return sizes;
}

/** Events recorded and held on the gateway's own thread (not yet handed to a writer). */
function heldOnGatewayThread(sink: AnalyticsSink): number {
  return (sink as unknown as { queue: unknown[] }).queue.length;
}

/** A logger whose lines are kept, parsed. */
function capturedLogger(): { logger: pino.Logger; lines: Array<{ level: number; msg: string; lost?: number }> } {
  const lines: Array<{ level: number; msg: string; lost?: number }> = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }) };
}

async function droppedOnMetrics(): Promise<number> {
  const match = /^portico_analytics_events_dropped_total (\d+)$/m.exec(await register.metrics());
  return match ? Number(match[1]) : NaN;
}

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('not done within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An in-memory SQLite store (its sink writes on the event loop). */
async function openMemory(): Promise<TestStore> {
  const store = await openStore('sqlite::memory:');
  return { store, url: 'sqlite::memory:', dispose: () => store.close() };
}

/** Runs `check` with a sink on a fresh store (SQLite file unless `open` says otherwise), then closes both. */
async function withSink(
  batchSize: number,
  check: (sink: AnalyticsSink, t: TestStore) => Promise<void>,
  open: () => Promise<TestStore> = sqliteTestStore,
): Promise<void> {
  const t = await open();
  const sink = new AnalyticsSink({ store: t.store, databaseUrl: t.url, logger: quiet, batchSize, flushMs: 60_000 });
  try {
    await check(sink, t);
  } finally {
    await sink.close();
    await t.dispose();
  }
}

describe('analytics sink', () => {
  test('on a SQLite file, batches are committed by the writer thread, rollups included', () =>
    withSink(500, async (sink, t) => {
      assert.equal(sink.writer, 'thread');
      for (let i = 0; i < 1234; i++) sink.record(event(i));
      await sink.flush();
      assert.deepEqual(await stored(t), { events: 1234, rolledUp: 1234 });
      assert.equal(sink.written, 1234);
    }));

  test('a batch with payloads captured (tens of megabytes) is written whole', () =>
    withSink(500, async (sink, t) => {
      const body = 'x'.repeat(65_536);
      for (let i = 0; i < 500; i++)
        sink.record({ ...event(i), content: 'payload', request_body: body, response_body: body });
      await sink.flush();
      assert.equal(sink.pending, 0);
      assert.deepEqual(await stored(t), { events: 500, rolledUp: 500 });
    }));

  test('a batch the thread could not write is kept and written on the next flush', () =>
    withSink(500, async (sink, t) => {
      t.store.sqlite!.exec('alter table activity_calls rename to activity_calls_away');
      for (let i = 0; i < 10; i++) sink.record(event(i));
      await sink.flush();
      assert.equal(sink.pending, 10);
      assert.equal(sink.written, 0);
      t.store.sqlite!.exec('alter table activity_calls_away rename to activity_calls');
      await sink.flush();
      assert.equal(sink.pending, 0);
      assert.deepEqual(await stored(t), { events: 10, rolledUp: 10 });
    }));

  test('close() writes what is queued and ends the thread; the file is whole for the next opener', async () => {
    const t = await sqliteTestStore();
    const sink = new AnalyticsSink({ store: t.store, logger: quiet, batchSize: 500, flushMs: 60_000 });
    for (let i = 0; i < 42; i++) sink.record(event(i));
    await sink.close();
    sink.record(event(99));
    await t.store.close();
    const again = await openStore(t.url);
    try {
      assert.equal((await listEvents(again.db, {}, 100)).length, 42);
    } finally {
      await again.close();
      await t.dispose().catch(() => undefined);
    }
  });

  test('close() returns once the busy timeout passes while another connection holds the write lock, counting what it could not write', async () => {
    const t = await sqliteTestStore();
    const { logger, lines } = capturedLogger();
    const sink = new AnalyticsSink({ store: t.store, logger, batchSize: 500, flushMs: 60_000 });
    try {
      // The writer thread's commit waits for the lock up to its busy timeout (5 s), then fails.
      t.store.sqlite!.exec('begin immediate');
      for (let i = 0; i < 10; i++) sink.record(event(i));
      const started = Date.now();
      await sink.close();
      const took = Date.now() - started;
      assert.ok(took < 8000, `close() took ${took} ms`);
      assert.equal(sink.dropped, 10);
      assert.deepEqual(
        lines.filter((l) => l.level >= 40).map((l) => [l.msg, l.lost]),
        [
          ['analytics events not written; holding them and retrying with back-off', undefined],
          ['analytics events not written at stop: the store is unreachable', 10],
        ],
      );
    } finally {
      t.store.sqlite!.exec('rollback');
      await t.dispose();
    }
  });

  test('events that arrive while a batch is written wait to fill a batch, not a small write of their own', () =>
    withSink(100, async (sink, t) => {
      const sizes = watchBatches(sink);
      for (let i = 0; i < 100; i++) sink.record(event(i));
      // The first batch is in flight: these arrive meanwhile, as requests do under load.
      for (let i = 100; i < 130; i++) sink.record(event(i));
      await until(() => sink.written >= 100);
      assert.deepEqual(sizes, [100], 'the 30 that came during the write are not written on their own');
      assert.equal(sink.pending, 30);
      for (let i = 130; i < 200; i++) sink.record(event(i));
      await until(() => sink.written >= 200);
      assert.deepEqual(sizes, [100, 100]);
      for (let i = 200; i < 205; i++) sink.record(event(i));
      await sink.flush();
      assert.deepEqual(sizes, [100, 100, 5], 'flush() writes what is left');
      assert.deepEqual(await stored(t), { events: 205, rolledUp: 205 });
    }));

  test('events that fill no batch are written when the interval passes', async () => {
    const t = await sqliteTestStore();
    const sink = new AnalyticsSink({ store: t.store, logger: quiet, batchSize: 100, flushMs: 50 });
    try {
      const sizes = watchBatches(sink);
      for (let i = 0; i < 130; i++) sink.record(event(i));
      await until(() => sink.written >= 130);
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        130,
      );
      assert.deepEqual(await stored(t), { events: 130, rolledUp: 130 });
    } finally {
      await sink.close();
      await t.dispose();
    }
  });

  test('issue-18: under a sustained stream the gateway thread holds one chunk at most, and each commit is a full batch', () =>
    withSink(500, async (sink, t) => {
      const sizes = watchBatches(sink);
      let most = 0;
      for (let i = 0; i < 5000; i++) {
        sink.record(event(i));
        most = Math.max(most, heldOnGatewayThread(sink));
        // Requests between them: the thread's reports come in meanwhile.
        if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
      }
      // No flush: the interval is a minute, so only full batches can have been committed.
      await until(() => sink.written >= 5000);
      assert.ok(most <= eventsPerHandOff, `held on the gateway thread at most ${most} events`);
      assert.deepEqual(sizes, new Array(10).fill(500), 'one transaction per 500 events');
      assert.equal(sink.pending, 0);
      assert.deepEqual(await stored(t), { events: 5000, rolledUp: 5000 });
    }));

  test('when the writer thread dies, the events it held are counted as dropped and logged; later ones are written by the retry', async () => {
    const t = await sqliteTestStore();
    const { logger, lines } = capturedLogger();
    const sink = new AnalyticsSink({ store: t.store, logger, batchSize: 500, flushMs: 1000 });
    const droppedBefore = await droppedOnMetrics();
    try {
      // Three chunks handed to the thread (96 events), four still here.
      for (let i = 0; i < 100; i++) sink.record(event(i));
      assert.equal(heldOnGatewayThread(sink), 100 - 3 * eventsPerHandOff);
      const thread = (sink as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread;
      await thread.worker.terminate();
      assert.equal(sink.dropped, 3 * eventsPerHandOff);
      assert.equal((await droppedOnMetrics()) - droppedBefore, 3 * eventsPerHandOff, 'counted on /metrics');
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg, l.lost]),
        [[40, 'analytics writer thread stopped: the events it held are lost (counted as dropped)', 96]],
      );
      assert.equal(sink.pending, 4);
      for (let i = 100; i < 110; i++) sink.record(event(i));
      assert.equal(heldOnGatewayThread(sink), 14, 'kept here until the retry starts a new thread');
      // The retry (after 1 s) hands them to a new thread and commits them.
      await until(() => sink.written === 14);
      assert.equal(sink.pending, 0);
      assert.deepEqual(await stored(t), { events: 14, rolledUp: 14 });
      // The new thread was sent the scopes again (the dead one's refs mean nothing to it).
      const written = await listEvents(t.store.db, {}, 100);
      assert.deepEqual(
        written.map((e) => [e.tx_id, e.api_name]).sort(),
        Array.from({ length: 14 }, (_, k) => [`tx-${96 + k}`, (96 + k) % 2 ? 'odd' : 'even']).sort(),
      );
      assert.equal(lines.at(-1)?.msg, 'analytics writes recovered');
      assert.equal(lines.length, 2);
    } finally {
      await sink.close();
      await t.dispose();
    }
  });

  test('while commits fail, the thread keeps at most maxQueued events and the batch it collects (the oldest batches dropped, counted), and the retry writes them', async () => {
    const t = await sqliteTestStore();
    const { logger, lines } = capturedLogger();
    const sink = new AnalyticsSink({ store: t.store, logger, batchSize: 100, flushMs: 50, maxQueued: 300 });
    const droppedBefore = await droppedOnMetrics();
    try {
      t.store.sqlite!.exec('alter table activity_calls rename to activity_calls_away');
      for (let i = 0; i < 10; i++) sink.record(event(i));
      await sink.flush();
      assert.equal(sink.pending, 10, 'the failed batch is kept');
      for (let i = 10; i < 1010; i++) {
        sink.record(event(i));
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      // Dropped as batches end: at most maxQueued in ended batches, plus the one being collected.
      await until(() => sink.pending <= 300 + 100);
      assert.ok(heldOnGatewayThread(sink) < eventsPerHandOff, 'the thread holds them, not the gateway thread');
      assert.ok(sink.pending > 300 - 100, `${sink.pending} kept: whole batches are dropped`);
      assert.equal(sink.dropped, 1010 - sink.pending);
      assert.equal((await droppedOnMetrics()) - droppedBefore, sink.dropped, 'counted on /metrics');
      t.store.sqlite!.exec('alter table activity_calls_away rename to activity_calls');
      await until(() => sink.pending === 0);
      const kept = 1010 - sink.dropped;
      assert.equal(sink.written, kept);
      assert.deepEqual(await stored(t), { events: kept, rolledUp: kept });
      const ids = new Set((await listEvents(t.store.db, {}, 10_000)).map((e) => e.tx_id));
      assert.ok(ids.has('tx-1009') && !ids.has('tx-0'), 'the oldest were dropped');
      assert.deepEqual(
        lines.map((l) => l.msg),
        ['analytics events not written; holding them and retrying with back-off', 'analytics writes recovered'],
      );
    } finally {
      await sink.close();
      await t.dispose();
    }
  });

  test('issue-18: each event is stored with its own scope, past the scopes the sink remembers (the thread told to forget its refs)', () =>
    withSink(500, async (sink, t) => {
      // Distinct apps beyond maxKnownScopes, each seen twice (the second time after the map started over).
      const apps = maxKnownScopes + 300;
      const of = (i: number) => ({ ...event(i), app_id: `app-${i % apps}`, app_name: `App ${i % apps}` });
      for (let i = 0; i < 2 * apps; i++) sink.record(of(i));
      await sink.flush();
      assert.equal(sink.written, 2 * apps);
      const rows = await t.store.db
        .selectFrom('activity_events')
        .select(['tx_id', 'app_id', 'app_name', 'api_name'])
        .execute();
      assert.equal(rows.length, 2 * apps);
      for (const row of rows) {
        const i = Number(row.tx_id.slice(3));
        assert.deepEqual(
          [row.app_id, row.app_name, row.api_name],
          [`app-${i % apps}`, `App ${i % apps}`, i % 2 ? 'odd' : 'even'],
        );
      }
      const scopes = await t.store.db.selectFrom('activity_scopes').select('id').execute();
      // apps is even, so each app's events all have one API (i % 2): one scope per app.
      assert.equal(scopes.length, apps, 'each scope stored once: found again after the forget');
    }));

  for (const [name, open] of [
    ['SQLite file (writer thread)', sqliteTestStore],
    ['in-memory SQLite (event loop)', () => openMemory()],
    ['PostgreSQL (pool)', postgresTestStore],
  ] as const)
    test(`issue-18: scopes whose texts run together alike stay apart (${name}): each event keeps its own app and consumer org`, () =>
      withSink(
        500,
        async (sink, t) => {
          // A consumer chooses its app's title: "ab" + org "c" and "a" + org "bc" read alike when
          // joined, and so do titles carrying a length prefix of their own. Six scopes, so the
          // sink looks most of them up by key, not only by comparing the last few.
          const pairs: Array<[string, string]> = [
            ['ab', 'c'],
            ['a', 'bc'],
            ['1:a2:', 'bc'],
            ['1:a', '2:bc'],
            ['x', 'y'],
            ['xy', ''],
          ];
          const of = (i: number) => ({
            ...event(i),
            api_name: 'same',
            app_name: pairs[i % pairs.length][0],
            consumer_org_id: pairs[i % pairs.length][1],
          });
          for (let i = 0; i < 120; i++) sink.record(of(i));
          await sink.flush();
          const rows = await t.store.db
            .selectFrom('activity_events')
            .select(['tx_id', 'app_name', 'consumer_org_id'])
            .execute();
          assert.equal(rows.length, 120);
          for (const row of rows) {
            const i = Number(row.tx_id.slice(3));
            assert.deepEqual([row.app_name, row.consumer_org_id], pairs[i % pairs.length], row.tx_id);
          }
          const scopes = await t.store.db.selectFrom('activity_scopes').select('id').execute();
          assert.equal(scopes.length, pairs.length);
        },
        open,
      ));

  test('on an in-memory SQLite store, batches are written on the event loop', () =>
    withSink(
      100,
      async (sink, t) => {
        assert.equal(sink.writer, 'loop');
        for (let i = 0; i < 120; i++) sink.record(event(i));
        await sink.flush();
        assert.deepEqual(await stored(t), { events: 120, rolledUp: 120 });
      },
      async () => {
        const store = await openStore('sqlite::memory:');
        return { store, url: 'sqlite::memory:', dispose: () => store.close() };
      },
    ));

  test('on PostgreSQL, batches go through the pool', () =>
    withSink(
      100,
      async (sink, t) => {
        assert.equal(sink.writer, 'pool');
        for (let i = 0; i < 250; i++) sink.record(event(i));
        await sink.flush();
        assert.deepEqual(await stored(t), { events: 250, rolledUp: 250 });
      },
      postgresTestStore,
    ));
});
