/**
 * Analytics at volume (issue 8): fills a fresh PostgreSQL database with N activity events
 * (default 10 million, spread over 30 days, generated inside PostgreSQL with
 * generate_series), builds the hourly rollups from them (the gateway's sink maintains them as
 * it writes; a bulk load rebuilds them), then times the console's analytics queries over the
 * last 24 hours, 7 days and 30 days. Usage: node --import tsx bench/analytics-volume.ts [events]
 * Prints a Markdown table; nothing is kept (the database is dropped at the end).
 */
import pg from 'pg';
import { sql } from 'kysely';
import { callsOverTime, countBy, latencyPercentiles, listEvents } from '../src/store/analytics.ts';
import type { EventDimension, EventFilter } from '../src/store/analytics.ts';
import { rebuildRollup } from '../src/store/rollup.ts';
import { callColumns, scopeColumns } from '../src/store/analytics-writes.ts';
import { openStore } from '../src/store/store.ts';

const server = process.env.PORTICO_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const total = Number(process.argv[2] ?? 10_000_000);
const name = `portico_volume_${process.pid}`;

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  await client.query(query);
  await client.end();
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

await admin(`create database ${name}`);
const url = new URL(server);
url.pathname = `/${name}`;
const store = await openStore(url.toString());
try {
  const now = Date.now();
  const span = 30 * 86_400_000;
  // The events as the sink would write them: their scopes once each, then the calls pointing at them.
  const scopes = scopeColumns.join(', ');
  const fill = await timed(async () => {
    await sql`create temporary table staged as
        select ${now} - (i::bigint * ${span} / ${total}) as ts, 'tx' || i as tx_id, 'demo' as org_name, 'sandbox' as catalog_name,
          -- Dimensions are correlated as in real traffic: an operation belongs to one API, an
          -- app to one consumer org and one plan (200 apps in 40 orgs, 4 operations, 5 status codes).
          (array['logistics','logistics','financing','inventory'])[1 + i % 4] as api_name, '1.0.0' as api_version,
          (array['shipping.calc','get.stores','calculate','items'])[1 + i % 4] as operation_id, 'GET' as verb, '/demo/sandbox/x' as path,
          (array[200,200,200,200,200,200,200,200,400,401,429,500])[1 + (i / 7) % 12] as status, (i % 997) / 10.0 as latency_ms,
          (i % 499) / 10.0 as backend_ms, 'client' || ((i / 13) % 200) as client_id, 'app' || ((i / 13) % 200) as app_id,
          'App ' || ((i / 13) % 200) as app_name, '' as consumer_org_id, 'org' || ((i / 13) % 200 % 40) as consumer_org_name,
          '' as subscription_id, '' as plan_id, 'accessories' as product_name, (array['silver','gold'])[1 + ((i / 13) % 200) % 2] as plan_name,
          '' as user_name, '' as error_name, 'activity' as content
        from generate_series(1, ${total}) as i`.execute(store.db);
    await sql.raw(`insert into activity_scopes (${scopes}) select distinct ${scopes} from staged`).execute(store.db);
    await sql
      .raw(
        `insert into activity_calls (scope_id, ${callColumns.join(', ')})
         select s.id, ${callColumns.map((c) => (c.startsWith('request_') || c.startsWith('response_') ? 'null' : `e.${c}`)).join(', ')}
         from staged e join activity_scopes s on ${scopeColumns.map((c) => `s.${c} = e.${c}`).join(' and ')}`,
      )
      .execute(store.db);
    await sql`drop table staged`.execute(store.db);
  });
  const rollup = await timed(() => rebuildRollup(store.db));
  await sql`analyze activity_calls`.execute(store.db);
  await sql`analyze activity_scopes`.execute(store.db);
  await sql`analyze activity_rollup`.execute(store.db);
  const rollupRows = await store.db
    .selectFrom('activity_rollup')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const rows: string[] = [];
  for (const [label, windowMs] of [
    ['last 24 hours', 86_400_000],
    ['last 7 days', 7 * 86_400_000],
    ['last 30 days', 30 * 86_400_000],
  ] as const) {
    const filter: EventFilter = {
      orgName: 'demo',
      catalogName: 'sandbox',
      fromTs: now - windowMs,
      toTs: now + 1,
    };
    const matching = Math.round((total * windowMs) / span);
    const bucket = windowMs <= 86_400_000 ? 3_600_000 : 6 * 3_600_000;
    const over = await timed(() => callsOverTime(store.db, filter, bucket));
    const dims: EventDimension[] = ['api_name', 'operation_id', 'status', 'app_id', 'plan_id'];
    const by = await timed(() => Promise.all(dims.map((d) => countBy(store.db, filter, d))));
    const pct = await timed(() => latencyPercentiles(store.db, filter));
    const latest = await timed(() => listEvents(store.db, filter, 100));
    const page = await timed(() =>
      Promise.all([
        callsOverTime(store.db, filter, bucket),
        latencyPercentiles(store.db, filter),
        ...dims.map((d) => countBy(store.db, filter, d)),
        listEvents(store.db, filter, 100),
      ]),
    );
    rows.push(
      `| ${label} (~${matching.toLocaleString('en')} events) | ${over.ms.toFixed(0)} | ${by.ms.toFixed(0)} | ${pct.ms.toFixed(0)} | ${latest.ms.toFixed(0)} | ${page.ms.toFixed(0)} |`,
    );
  }
  console.log(
    `${total.toLocaleString('en')} events written in ${(fill.ms / 1000).toFixed(1)} s (PostgreSQL, generate_series); hourly rollups rebuilt from them in ${(rollup.ms / 1000).toFixed(1)} s (${Number(rollupRows.n).toLocaleString('en')} rows)\n`,
  );
  console.log(
    '| window | calls over time (ms) | 5 breakdowns (ms) | percentiles (ms) | latest 100 (ms) | whole analytics page (ms) |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  await store.close();
  await admin(`drop database if exists ${name} with (force)`);
}
