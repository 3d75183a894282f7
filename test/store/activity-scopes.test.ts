/**
 * Issue 18: activity events stored as calls pointing at their scopes (migration 0009). Events a
 * store held before the migration come out of the `activity_events` view as they went in, ids
 * included, and the next event written gets the next id.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import { listEvents } from '../../src/store/analytics.ts';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { migrate } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';

function event(overrides: Partial<NewActivityEvent>): NewActivityEvent {
  return {
    ts: 1_700_000_000_000,
    tx_id: 'tx',
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: 'orders',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/orders',
    status: 200,
    latency_ms: 1.5,
    backend_ms: 1,
    client_id: 'client-1',
    app_id: 'app-1',
    app_name: 'App',
    consumer_org_id: 'corg-1',
    consumer_org_name: 'Devs',
    subscription_id: 'sub-1',
    plan_id: 'plan-1',
    product_name: 'p',
    plan_name: 'gold',
    user_name: '',
    error_name: '',
    content: 'activity',
    request_headers: null,
    request_body: null,
    response_headers: null,
    response_body: null,
    ...overrides,
  };
}

describe('activity scopes (migration 0009)', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: events stored before the migration read the same after it, ids kept; new ones continue the ids`, async () => {
      const t = await backend.open(false);
      try {
        const migrator = new Migrator({ db: t.store.db, provider: migrationProvider(t.store.dialect) });
        const { error } = await migrator.migrateTo('0008-account-email');
        assert.equal(error, undefined);
        const before = [
          event({ tx_id: 'a', ts: 1_700_000_000_001 }),
          // Another app (a title with the separator characters a naive key would use), with payloads.
          event({
            tx_id: 'b',
            ts: 1_700_000_000_002,
            app_id: 'app-2',
            app_name: 'App\u001f5:gold',
            client_id: 'client-2',
            status: 500,
            error_name: 'ConnectionError',
            content: 'payload',
            request_headers: '{"accept":"*/*"}',
            request_body: '{"q":1}',
            response_headers: '{}',
            response_body: 'oops',
            user_name: 'alice',
          }),
          // The first scope again, and one with the ids that events before issue 16 had empty.
          event({ tx_id: 'c', ts: 1_700_000_000_003, path: '/acme/sandbox/orders/9', latency_ms: 12.25 }),
          event({ tx_id: 'd', ts: 1_700_000_000_004, consumer_org_id: '', subscription_id: '', plan_id: '' }),
        ];
        // As the old table took them: ids chosen here, with a gap, to see them kept.
        for (const [i, e] of before.entries())
          await sql`insert into activity_events (id, ts, tx_id, org_name, catalog_name, api_name, api_version,
              operation_id, verb, path, status, latency_ms, backend_ms, client_id, app_id, app_name,
              consumer_org_name, product_name, plan_name, error_name, content, request_headers, request_body,
              response_headers, response_body, user_name, consumer_org_id, subscription_id, plan_id)
            values (${10 + i * 5}, ${e.ts}, ${e.tx_id}, ${e.org_name}, ${e.catalog_name}, ${e.api_name},
              ${e.api_version}, ${e.operation_id}, ${e.verb}, ${e.path}, ${e.status}, ${e.latency_ms},
              ${e.backend_ms}, ${e.client_id}, ${e.app_id}, ${e.app_name}, ${e.consumer_org_name},
              ${e.product_name}, ${e.plan_name}, ${e.error_name}, ${e.content}, ${e.request_headers},
              ${e.request_body}, ${e.response_headers}, ${e.response_body}, ${e.user_name},
              ${e.consumer_org_id}, ${e.subscription_id}, ${e.plan_id})`.execute(t.store.db);

        await migrate(t.store.db, t.store.dialect);

        const read = async () =>
          (await listEvents(t.store.db, {}, 100)).map((row) => ({ ...row, id: Number(row.id) })).reverse();
        assert.deepEqual(
          await read(),
          before.map((e, i) => ({ id: 10 + i * 5, ...e })),
        );
        const scopes = await t.store.db.selectFrom('activity_scopes').selectAll().execute();
        assert.equal(scopes.length, 3, 'one scope per distinct subscription and operation');

        await t.store.transaction((trx) => insertEvents(trx, [event({ tx_id: 'e', ts: 1_700_000_000_005 })]));
        const after = await read();
        assert.equal(after.length, 5);
        assert.equal(after[4].tx_id, 'e');
        assert.ok(after[4].id > 25, `the next id follows the last one moved (${after[4].id})`);
        assert.equal(
          (await t.store.db.selectFrom('activity_scopes').selectAll().execute()).length,
          3,
          'a known scope is not stored twice',
        );

        // A gateway of the previous version, mid rolling upgrade, inserts into activity_events as
        // it did (without the ids 0007 added, as the oldest writers did): the view takes it.
        const old = event({ tx_id: 'f', ts: 1_700_000_000_006, app_id: 'app-3', status: 429 });
        await sql`insert into activity_events (ts, tx_id, org_name, catalog_name, api_name, api_version,
            operation_id, verb, path, status, latency_ms, backend_ms, client_id, app_id, app_name,
            consumer_org_name, product_name, plan_name, error_name, content)
          values (${old.ts}, ${old.tx_id}, ${old.org_name}, ${old.catalog_name}, ${old.api_name},
            ${old.api_version}, ${old.operation_id}, ${old.verb}, ${old.path}, ${old.status}, ${old.latency_ms},
            ${old.backend_ms}, ${old.client_id}, ${old.app_id}, ${old.app_name}, ${old.consumer_org_name},
            ${old.product_name}, ${old.plan_name}, ${old.error_name}, ${old.content}),
            (${old.ts + 1}, 'g', ${old.org_name}, ${old.catalog_name}, ${old.api_name},
            ${old.api_version}, ${old.operation_id}, ${old.verb}, ${old.path}, 200, 2,
            ${old.backend_ms}, ${old.client_id}, ${old.app_id}, ${old.app_name}, ${old.consumer_org_name},
            ${old.product_name}, ${old.plan_name}, '', ${old.content})`.execute(t.store.db);
        const last = (await read()).slice(5).map(({ id: _id, ...rest }) => rest);
        const without = { consumer_org_id: '', subscription_id: '', plan_id: '', user_name: '' };
        assert.deepEqual(last, [
          { ...old, ...without },
          { ...old, ...without, tx_id: 'g', ts: old.ts + 1, status: 200, latency_ms: 2 },
        ]);
        assert.equal((await t.store.db.selectFrom('activity_scopes').selectAll().execute()).length, 4);
      } finally {
        await t.dispose();
      }
    });
  }
});
