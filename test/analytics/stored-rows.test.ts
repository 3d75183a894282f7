/**
 * Issue 18 guard: the activity log's cheaper path (batches filled before they are written,
 * rollups summed by comparing fields, values bound as arguments) stores the same thing. A
 * varied set of events goes through the sink on each store; the stored events must be the
 * events recorded, column for column, and the rollups must be what the migration's SQL
 * rebuild (`rebuildRollup`: GROUP BY over the stored events, an independent sum) makes of them.
 * The events are built to break a shortcut: batches with one rollup row and with more than the
 * rows compared field by field, equal strings that are different objects, optional ids missing
 * or empty, latencies on the histogram's bounds, hours crossed inside a batch.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { AnalyticsSink } from '../../src/analytics/sink.ts';
import { callColumns, scopeColumns } from '../../src/store/analytics-writes.ts';
import { hourMs, rebuildRollup, rollupColumns, rollupDimensions } from '../../src/store/rollup.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { openStore } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

/** Every column an event has, as the `activity_events` view gives them back. */
const eventColumns = [...callColumns, ...scopeColumns];

/** A copy of `text` that is another string object (=== still holds, by content). */
const copy = (text: string) => text.split('').join('');

const latencies = [0.125, 1, 1.5, 2, 5, 9.875, 10, 20.25, 50, 100, 200, 499.5, 1000, 2000, 5000, 10_000, 12_345.5];
const statuses = [200, 201, 204, 400, 401, 404, 429, 500, 503];

function varied(count: number): NewActivityEvent[] {
  const events: NewActivityEvent[] = [];
  // The first 500 (one batch) are one app on one operation: one rollup row per hour.
  const start = Math.ceil(1_700_000_000_000 / hourMs) * hourMs - 250 * 1000; // an hour starts at the 250th
  for (let i = 0; i < count; i++) {
    const mixed = i >= 500;
    const app = mixed ? i % 13 : 0;
    const event: NewActivityEvent = {
      ts: start + i * 1000 + (i % 7),
      tx_id: `tx-${i}`,
      org_name: mixed && i % 5 === 0 ? copy('acme') : 'acme',
      catalog_name: mixed && i % 11 === 0 ? 'prod' : 'sandbox',
      api_name: mixed ? `api-${i % 3}` : 'api-0',
      api_version: '1.0.0',
      operation_id: mixed ? ['get', 'put', 'list'][i % 3] : 'get',
      verb: 'GET',
      path: `/acme/sandbox/x/${i % 4}`,
      status: mixed ? statuses[i % statuses.length] : 200,
      latency_ms: latencies[i % latencies.length],
      backend_ms: latencies[(i + 3) % latencies.length] / 2,
      client_id: app === 0 ? '' : `client-${app}`,
      app_id: app === 0 ? '' : `app-${app}`,
      app_name: app === 0 ? '' : app % 4 === 0 ? copy(`App ${app % 5}`) : `App ${app % 5}`,
      consumer_org_name: app === 0 ? '' : `devs-${app % 2}`,
      product_name: app === 0 ? '' : 'gold-product',
      plan_name: app === 0 ? '' : app % 3 === 0 ? 'silver' : 'gold',
      error_name: i % 9 === 0 ? 'GW_MISSING_PARAMETER' : '',
      content: i % 4 === 0 ? 'payload' : 'activity',
      request_headers: i % 4 === 0 ? '{"accept":"*/*","x-note":"ünïcödé ✓"}' : null,
      request_body: i % 8 === 0 ? `{"n":${i}}` : null,
      response_headers: i % 4 === 0 ? '{"content-type":"application/json"}' : null,
      response_body: i % 4 === 0 ? `{"answer":"${'é'.repeat(i % 5)}"}` : null,
    };
    // Optional ids: missing on some events, empty or set on others (stored as '' when missing).
    if (i % 6 !== 1) event.user_name = i % 6 === 2 ? `user-${i % 3}` : '';
    if (app !== 0 && i % 10 !== 3) {
      event.consumer_org_id = `corg-${app % 2}`;
      event.subscription_id = `sub-${app}`;
      event.plan_id = app % 3 === 0 ? 'plan-silver' : 'plan-gold';
    } else if (i % 2 === 0) {
      event.consumer_org_id = '';
      event.subscription_id = '';
      event.plan_id = '';
    }
    events.push(event);
  }
  return events;
}

/**
 * For each rollup dimension (and the hour), events that differ from one base event in that field
 * alone, in turn with the base and with a same-content copy of the base's value (which must add
 * to the base's row): a sum that ignored one field, or told equal strings apart, shows.
 */
function oneFieldApart(): NewActivityEvent[][] {
  const base = varied(600)[599];
  Object.assign(base, { consumer_org_id: 'corg-1', subscription_id: 'sub-1', plan_id: 'plan-gold', app_id: 'app-1' });
  const fields = [...rollupDimensions, 'ts'] as const;
  return fields.map((field, f) => {
    const other: NewActivityEvent =
      field === 'ts'
        ? { ...base, ts: base.ts + hourMs }
        : field === 'status'
          ? { ...base, status: base.status + 1 }
          : { ...base, [field]: `${String(base[field])}-other` };
    const same: NewActivityEvent =
      field === 'ts' || field === 'status' ? { ...base } : { ...base, [field]: copy(String(base[field])) };
    return [base, other, base, other, same, other, base].map((e, i) => ({ ...e, tx_id: `apart-${f}-${i}` }));
  });
}

/** What the table must hold for an event: its columns, optional ids and texts defaulted. */
function expectedRow(event: NewActivityEvent): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const column of eventColumns) {
    const value = event[column];
    row[column] =
      value !== undefined
        ? value
        : ['request_headers', 'request_body', 'response_headers', 'response_body'].includes(column)
          ? null
          : '';
  }
  return row;
}

function plain(rows: Array<Record<string, unknown>>, columns: readonly string[]): Array<Record<string, unknown>> {
  // PostgreSQL answers bigint as strings: compare numbers as numbers.
  return rows.map((row) =>
    Object.fromEntries(
      columns.map((c) => [
        c,
        typeof row[c] === 'string' && /^(ts|bucket_ts|calls|h\d+)$/.test(c) ? Number(row[c]) : row[c],
      ]),
    ),
  );
}

async function storedRollups(t: TestStore): Promise<Array<Record<string, unknown>>> {
  const rows = await t.store.db
    .selectFrom('activity_rollup')
    .selectAll()
    .orderBy([
      'bucket_ts',
      'org_name',
      'catalog_name',
      'api_name',
      'operation_id',
      'status',
      'app_id',
      'subscription_id',
      'plan_id',
      'app_name',
      'consumer_org_id',
      'consumer_org_name',
      'plan_name',
      'product_name',
    ])
    .execute();
  return plain(rows as Array<Record<string, unknown>>, rollupColumns);
}

const quiet = pino({ level: 'silent' });

describe('activity events and rollups as stored', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: every event stored as recorded, and the rollups a GROUP BY of them makes`, async () => {
      const t = await backend.open();
      const sink = new AnalyticsSink({
        store: t.store,
        databaseUrl: t.url,
        logger: quiet,
        batchSize: 500,
        flushMs: 60_000,
      });
      const events = varied(1700);
      try {
        assert.equal(sink.writer, backend.name === 'sqlite' ? 'thread' : 'pool');
        for (const event of events) sink.record(event);
        await sink.flush();
        // Each group a batch of its own (two rollup rows), then all in one (more than are compared).
        const groups = oneFieldApart();
        for (const group of groups) {
          for (const event of group) sink.record(event);
          await sink.flush();
        }
        // The same calls again as new ones (a call written again with its transaction id is skipped).
        const again = groups.flat().map((event) => ({ ...event, tx_id: `${event.tx_id}-again` }));
        for (const event of again) sink.record(event);
        await sink.flush();
        events.push(...groups.flat(), ...again);
        assert.equal(sink.written, events.length);

        const stored = await t.store.db.selectFrom('activity_events').selectAll().orderBy('id').execute();
        assert.deepEqual(plain(stored as Array<Record<string, unknown>>, eventColumns), events.map(expectedRow));

        const rollups = await storedRollups(t);
        assert.ok(rollups.length > 60, `${rollups.length} rollup rows: batches with many rows were written`);
        assert.equal(new Set(rollups.map((r) => r.bucket_ts)).size, 3, 'the events span three hours');
        await rebuildRollup(t.store.db);
        assert.deepEqual(rollups, await storedRollups(t));
      } finally {
        await sink.close();
        await t.dispose();
      }
    });
  }

  test('in-memory SQLite (written on the event loop): the same', async () => {
    const store = await openStore('sqlite::memory:');
    const sink = new AnalyticsSink({ store, logger: quiet, batchSize: 500, flushMs: 60_000 });
    const events = varied(1200);
    try {
      for (const event of events) sink.record(event);
      await sink.flush();
      const stored = await store.db.selectFrom('activity_events').selectAll().orderBy('id').execute();
      assert.deepEqual(plain(stored as Array<Record<string, unknown>>, eventColumns), events.map(expectedRow));
      const t = { store, url: '', dispose: async () => undefined };
      const rollups = await storedRollups(t);
      await rebuildRollup(store.db);
      assert.deepEqual(rollups, await storedRollups(t));
    } finally {
      await sink.close();
      await store.close();
    }
  });
});
