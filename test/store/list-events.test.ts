/**
 * `listEvents` (the management API's and the console's latest events) reads what the org's own
 * rows cost, not the whole table: an org with 5 events beside two million of other orgs took
 * 436 ms on PostgreSQL, which walked every newer call of every org to find them. The same
 * answers as before on both stores (newest first, ties by id), and on PostgreSQL the rows the
 * plan examines are counted (EXPLAIN ANALYZE of the statements it sends), not timed.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import { listEvents } from '../../src/store/analytics.ts';
import type { EventFilter } from '../../src/store/analytics.ts';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import type { ActivityEvent, Database, NewActivityEvent } from '../../src/store/schema.ts';
import { postgresTestStore, storeBackends } from '../helpers/stores.ts';

const base = 1_700_000_000_000;
let n = 0;

function call(org: string, api: string, app: string, ts: number): NewActivityEvent {
  return {
    ts,
    tx_id: `list-${n++}`,
    org_name: org,
    catalog_name: 'sandbox',
    api_name: api,
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: `/${org}/sandbox/${api}`,
    status: 200,
    latency_ms: 1,
    backend_ms: 1,
    client_id: app,
    app_id: app,
    app_name: app,
    consumer_org_name: 'Devs',
    product_name: 'p',
    plan_name: 'gold',
    error_name: '',
    content: 'activity',
  };
}

/** The answer listEvents must give: the filter applied to every event, newest first, ties by id. */
function expected(all: ActivityEvent[], filter: EventFilter, limit: number): number[] {
  return all
    .filter(
      (e) =>
        (filter.orgName === undefined || e.org_name === filter.orgName) &&
        (filter.catalogName === undefined || e.catalog_name === filter.catalogName) &&
        (filter.apiName === undefined || e.api_name === filter.apiName) &&
        (filter.appId === undefined || e.app_id === filter.appId) &&
        (filter.fromTs === undefined || e.ts >= filter.fromTs) &&
        (filter.toTs === undefined || e.ts < filter.toTs),
    )
    .sort((a, b) => b.ts - a.ts || Number(b.id) - Number(a.id))
    .slice(0, limit)
    .map((e) => Number(e.id));
}

describe('listEvents', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: the newest events of the filter, newest first and ties by id, however the org's rows lie among others'`, async () => {
      const t = await backend.open();
      try {
        const events: NewActivityEvent[] = [];
        // A busy org, newest; a quiet one whose calls are old and share times across its scopes.
        for (let i = 0; i < 600; i++) events.push(call('busy', `api-${i % 3}`, `app-${i % 7}`, base + 10_000 + i));
        for (let i = 0; i < 9; i++)
          events.push(call('quiet', `api-${i % 2}`, `app-${i % 3}`, base + Math.floor(i / 3)));
        events.push(call('quiet', 'api-0', 'app-0', base + 20_000));
        await t.store.transaction((trx) => insertEvents(trx, events));
        const all = await t.store.db.selectFrom('activity_events').selectAll().execute();
        const filters: EventFilter[] = [
          { orgName: 'quiet', catalogName: 'sandbox' },
          { orgName: 'quiet', catalogName: 'sandbox', apiName: 'api-1' },
          { orgName: 'quiet', catalogName: 'sandbox', appId: 'app-2' },
          { orgName: 'quiet', catalogName: 'sandbox', fromTs: base + 1, toTs: base + 20_000 },
          { orgName: 'busy', catalogName: 'sandbox' },
          { orgName: 'busy', catalogName: 'sandbox', apiName: 'api-2', toTs: base + 10_300 },
          { orgName: 'nobody', catalogName: 'sandbox' },
          {},
        ];
        for (const filter of filters)
          for (const limit of [1, 4, 5, 100]) {
            const ids = (await listEvents(t.store.db, filter, limit)).map((e) => Number(e.id));
            assert.deepEqual(ids, expected(all, filter, limit), `${JSON.stringify(filter)}, limit ${limit}`);
          }
      } finally {
        await t.dispose();
      }
    });
  }

  test(
    'postgres: the rows examined for an org with 5 old events beside 20 000 newer ones of other orgs stay few',
    {
      timeout: 60_000,
    },
    async () => {
      const t = await postgresTestStore();
      const statements: CompiledQuery[] = [];
      const pool = new pg.Pool({ connectionString: t.url, max: 1 });
      const db = new Kysely<Database>({
        dialect: new PostgresDialect({ pool }),
        log: (event) => void (event.level === 'query' && statements.push(event.query)),
      });
      try {
        const small = Array.from({ length: 5 }, (_, i) => call('small', 'api-0', 'app-0', base + i));
        const others = Array.from({ length: 20 }, (_, i) =>
          call(`org-${i % 4}`, `api-${i % 4}`, `app-${i}`, base + 100 + i),
        );
        await t.store.transaction((trx) => insertEvents(trx, [...small, ...others]));
        // 20 000 more calls of the other orgs' scopes, all newer than the small org's.
        await sql`insert into activity_calls (scope_id, ts, tx_id, verb, path, status, latency_ms, backend_ms,
          client_id, user_name, error_name, content)
        select s.id, ${base + 1000}::bigint + g, 'bulk-' || g, 'GET', '/x', 200, 1, 1, 'c', '', '', 'activity'
        from generate_series(1, 20000) g
        join activity_scopes s on s.id = (select min(id) from activity_scopes where org_name <> 'small') + g % 20`.execute(
          t.store.db,
        );
        await sql`analyze`.execute(t.store.db);
        const found = await listEvents(db, { orgName: 'small', catalogName: 'sandbox' }, 100);
        assert.equal(found.length, 5);
        let examined = 0;
        for (const statement of statements) {
          const explained = await pool.query(`explain (analyze, format json) ${statement.sql}`, [
            ...statement.parameters,
          ]);
          examined += callRowsExamined(explained.rows[0]['QUERY PLAN'][0].Plan);
        }
        assert.ok(examined < 5000, `${examined} rows of activity_calls examined for 5 events`);
      } finally {
        await db.destroy();
        await t.dispose();
      }
    },
  );
});

interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows of activity_calls a plan read: those each scan of it returned, and those its filter removed. */
function callRowsExamined(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'activity_calls'
      ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops']
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + callRowsExamined(child), 0);
}
