/**
 * Migration 0014 on a store that already holds activity: calls stored twice (a batch retried after
 * a lost commit answer, before calls had a unique key) are kept once, the rollups are rebuilt
 * without them and with `plan_calls` (the calls the plan's limits counted), and the key holds for
 * what is written next.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { subscriptionCallsSince } from '../../src/store/analytics.ts';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import { rebuildRollup, rollupDimensions } from '../../src/store/rollup.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { migrate } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';

const hour = 1_700_002_800_000;

function call(tx: string, ts: number, status: number, errorName: string): NewActivityEvent {
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
    status,
    latency_ms: 2,
    backend_ms: 1,
    client_id: 'client-1',
    user_name: '',
    app_id: 'app-1',
    app_name: 'App',
    consumer_org_id: 'corg-1',
    consumer_org_name: 'Devs',
    subscription_id: 'sub-1',
    plan_id: 'plan-1',
    product_name: 'p',
    plan_name: 'gold',
    error_name: errorName,
    content: 'activity',
  };
}

describe('migration 0014: a unique key for activity calls, plan_calls in the rollups', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: calls stored twice are kept once, rollups rebuilt with plan_calls, and the key holds after`, async () => {
      const t = await backend.open(false);
      try {
        const migrator = new Migrator({ db: t.store.db, provider: migrationProvider(t.store.dialect) });
        assert.equal((await migrator.migrateTo('0013-refresh-token-public-client')).error, undefined);
        const stored = [
          call('a', hour + 1, 200, ''),
          call('a', hour + 1, 200, ''), // the same call, written again by a retried batch
          call('b', hour + 2, 429, 'AssemblyRateLimitError'),
          call('c', hour + 3, 429, 'GW_RATE_LIMIT'),
        ];
        // As the writers before 0014 stored them: through the view (its trigger finds the scope).
        for (const e of stored)
          await sql`insert into activity_events ${sql.raw(`(${Object.keys(e).join(', ')})`)}
          values (${sql.join(Object.values(e))})`.execute(t.store.db);
        await rebuildRollup(t.store.db, rollupDimensions, false);

        await migrate(t.store.db, t.store.dialect);
        const calls = await t.store.db.selectFrom('activity_events').select(['tx_id']).orderBy('id').execute();
        assert.deepEqual(
          calls.map((c) => c.tx_id),
          ['a', 'b', 'c'],
        );
        const rollups = await t.store.db
          .selectFrom('activity_rollup')
          .select(['status', 'calls', sql<number>`plan_calls`.as('plan_calls')])
          .orderBy('status')
          .execute();
        assert.deepEqual(
          rollups.map((r) => [r.status, Number(r.calls), Number(r.plan_calls)]),
          [
            [200, 1, 1],
            [429, 2, 1],
          ],
        );
        assert.equal(await subscriptionCallsSince(t.store.db, 'sub-1', hour), 2);

        await t.store.transaction((trx) =>
          insertEvents(trx, [call('a', hour + 1, 200, ''), call('d', hour + 4, 200, '')]),
        );
        assert.equal(await subscriptionCallsSince(t.store.db, 'sub-1', hour), 3, 'the call stored already is skipped');
      } finally {
        await t.dispose();
      }
    });
  }
});
