/**
 * Gateway nodes writing activity batches to one PostgreSQL at once: each batch upserts the
 * rollup rows its events sum into, so two batches touching the same rows lock them in turn. In
 * opposite orders they deadlocked (40P01: about 3 batches in 30 lost); the rows are now upserted
 * in the order of their key, and a batch that loses a deadlock or a serialization check anyway is
 * tried again (`retryConflicts`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { retryConflicts } from '../../src/analytics/pg-writer.ts';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { openStore } from '../../src/store/store.ts';
import { postgresTestStore } from '../helpers/stores.ts';

const hour = 1_700_002_800_000;

/** One call of app `app` at `ts`: each app is a rollup row of its own. */
function call(app: number, ts: number, tx: string): NewActivityEvent {
  return {
    ts,
    tx_id: tx,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: 'orders',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/orders',
    status: 200,
    latency_ms: 3,
    backend_ms: 2,
    client_id: `client-${app}`,
    app_id: `app-${app}`,
    app_name: `App ${app}`,
    consumer_org_id: 'corg',
    consumer_org_name: 'Devs',
    subscription_id: `sub-${app}`,
    plan_id: 'plan',
    product_name: 'p',
    plan_name: 'gold',
    error_name: '',
    content: 'activity',
  };
}

describe('rollups written by several gateway nodes at once (PostgreSQL)', () => {
  test(
    '30 pairs of concurrent batches touching the same rollup rows in opposite orders all commit, each call counted once',
    {
      timeout: 120_000,
    },
    async () => {
      const t = await postgresTestStore();
      // A second node: its own pool on the same database.
      const other = await openStore(t.url);
      const apps = 20;
      try {
        // The scopes exist already, as they do on a running system: only the rollups contend.
        const warm = Array.from({ length: apps }, (_, app) => call(app, hour - 3_600_000, `warm-${app}`));
        await t.store.transaction((trx) => insertEvents(trx, warm));
        const outcomes: Array<PromiseSettledResult<void>> = [];
        for (let pair = 0; pair < 30; pair++) {
          const forward = Array.from({ length: apps }, (_, app) => call(app, hour + pair, `f-${pair}-${app}`));
          const backward = Array.from({ length: apps }, (_, app) =>
            call(apps - 1 - app, hour + pair, `b-${pair}-${app}`),
          );
          outcomes.push(
            ...(await Promise.allSettled([
              t.store.transaction((trx) => insertEvents(trx, forward)),
              other.transaction((trx) => insertEvents(trx, backward)),
            ])),
          );
        }
        const failed = outcomes.filter((o) => o.status === 'rejected');
        assert.deepEqual(
          failed.map((o) => (o as PromiseRejectedResult).reason?.code),
          [],
          `${failed.length} of ${outcomes.length} batches failed`,
        );
        const rows = await t.store.db
          .selectFrom('activity_rollup')
          .select(['app_id', 'calls'])
          .where('bucket_ts', '=', hour)
          .execute();
        assert.equal(rows.length, apps);
        for (const row of rows) assert.equal(Number(row.calls), 60, row.app_id);
      } finally {
        await other.close();
        await t.dispose();
      }
    },
  );
});

describe('retryConflicts', () => {
  const conflict = (code: string) => Object.assign(new Error(`conflict ${code}`), { code });

  test('tries a batch again after a deadlock (40P01) or a serialization failure (40001)', async () => {
    const codes = ['40P01', '40001'];
    let attempts = 0;
    const result = await retryConflicts(async () => {
      attempts++;
      if (codes.length > 0) throw conflict(codes.shift()!);
      return 'written';
    });
    assert.equal(result, 'written');
    assert.equal(attempts, 3);
  });

  test('gives up after a bounded number of attempts, with the last conflict', async () => {
    let attempts = 0;
    await assert.rejects(
      retryConflicts(async () => {
        attempts++;
        throw conflict('40P01');
      }),
      { code: '40P01' },
    );
    assert.equal(attempts, 3);
  });

  test('any other failure is not tried again here (the sink keeps the batch and backs off)', async () => {
    let attempts = 0;
    await assert.rejects(
      retryConflicts(async () => {
        attempts++;
        throw conflict('57014');
      }),
      { code: '57014' },
    );
    assert.equal(attempts, 1);
  });
});
