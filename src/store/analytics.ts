/** Activity events: the queries the console and portal ask, and the purge of old ones (writes: analytics-writes.ts). */
import { PostgresAdapter, sql } from 'kysely';
import type { Db } from './store.ts';
import type { ActivityEvent } from './schema.ts';
import { hourMs, latencyBounds, refusedBeforePlanLimit } from './rollup.ts';

export interface EventFilter {
  orgName?: string;
  catalogName?: string;
  apiName?: string;
  appId?: string;
  subscriptionId?: string;
  fromTs?: number;
  toTs?: number;
}

/** The scope columns a filter names, with their values: the same names in events, rollups and scopes. */
function scopeConditions(filter: EventFilter) {
  const named = [
    ['org_name', filter.orgName],
    ['catalog_name', filter.catalogName],
    ['api_name', filter.apiName],
    ['app_id', filter.appId],
    ['subscription_id', filter.subscriptionId],
  ] as const;
  return named.filter((pair): pair is readonly [(typeof pair)[0], string] => pair[1] !== undefined);
}

function filtered(db: Db, filter: EventFilter) {
  let query = db.selectFrom('activity_events');
  for (const [column, value] of scopeConditions(filter)) query = query.where(column, '=', value);
  if (filter.fromTs !== undefined) query = query.where('ts', '>=', filter.fromTs);
  if (filter.toTs !== undefined) query = query.where('ts', '<', filter.toTs);
  return query;
}

/**
 * Whether a query can read the hourly rollups: either no time bounds or a window of a day or
 * more — where counting whole hours at the window's edges moves the figures by at most an
 * hour's worth in 24.
 */
function usesRollup(filter: EventFilter): boolean {
  if (filter.fromTs === undefined && filter.toTs === undefined) return true;
  return (filter.toTs ?? Date.now()) - (filter.fromTs ?? 0) >= 24 * hourMs;
}

function rolled(db: Db, filter: EventFilter) {
  let query = db.selectFrom('activity_rollup');
  for (const [column, value] of scopeConditions(filter)) query = query.where(column, '=', value);
  if (filter.fromTs !== undefined) query = query.where('bucket_ts', '>=', Math.floor(filter.fromTs / hourMs) * hourMs);
  if (filter.toTs !== undefined) query = query.where('bucket_ts', '<', filter.toTs);
  return query;
}

/** Whether a filter names any scope column (all but the time window do). */
function scoped(filter: EventFilter): boolean {
  return scopeConditions(filter).length > 0;
}

/** The ids of the scopes a filter names (the unique key of activity_scopes leads with org, catalog, API). */
function scopesOf(db: Db, filter: EventFilter) {
  let query = db.selectFrom('activity_scopes').select('activity_scopes.id');
  for (const [column, value] of scopeConditions(filter)) query = query.where(column, '=', value);
  return query;
}

/** Calls in a time window, `fromTs` included and `toTs` not. */
function callsBetween(db: Db, fromTs: number | undefined, toTs: number | undefined) {
  let query = db.selectFrom('activity_calls');
  if (fromTs !== undefined) query = query.where('ts', '>=', fromTs);
  if (toTs !== undefined) query = query.where('ts', '<', toTs);
  return query;
}

/** How many of the newest calls (any org's) are looked through before an org's scopes are gone through one by one. */
const probedPerEvent = 20;

/**
 * The latest events, newest first (payload columns included). What it reads follows the rows of
 * the filter's scopes, not the table: 436 ms for an org with 5 events beside two million of other
 * orgs, when PostgreSQL walked every newer call to find them. First the newest
 * `probedPerEvent × limit` calls of the window (a busy org's latest are there); what is missing
 * is older than all of them, and comes from each of the filter's scopes in turn (index
 * `scope_id, ts`: the newest `limit` of each, by LATERAL on PostgreSQL; SQLite's planner goes
 * through the scopes by itself).
 */
export async function listEvents(db: Db, filter: EventFilter, limit = 100): Promise<ActivityEvent[]> {
  if (!scoped(filter))
    return filtered(db, filter).selectAll().orderBy('ts', 'desc').orderBy('id', 'desc').limit(limit).execute();
  const { fromTs, toTs } = filter;
  const edge = await callsBetween(db, fromTs, toTs)
    .select('ts')
    .orderBy('ts', 'desc')
    .limit(1)
    .offset(probedPerEvent * limit - 1)
    .executeTakeFirst();
  const latest = await callsBetween(db, edge === undefined ? fromTs : Math.max(fromTs ?? 0, edge.ts), toTs)
    .select(['id', 'ts'])
    .where('scope_id', 'in', scopesOf(db, filter))
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  if (edge !== undefined && latest.length < limit)
    latest.push(...(await olderCalls(db, filter, edge.ts, limit - latest.length)));
  if (latest.length === 0) return [];
  return db
    .selectFrom('activity_events')
    .selectAll()
    .where(
      'id',
      'in',
      latest.map((call) => call.id),
    )
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** The newest `limit` calls of the filter's scopes before `beforeTs`. */
function olderCalls(db: Db, filter: EventFilter, beforeTs: number, limit: number) {
  const toTs = Math.min(filter.toTs ?? beforeTs, beforeTs);
  if (!isPostgres(db))
    return callsBetween(db, filter.fromTs, toTs)
      .select(['id', 'ts'])
      .where('scope_id', 'in', scopesOf(db, filter))
      .orderBy('ts', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  return db
    .selectFrom(scopesOf(db, filter).as('s'))
    .crossJoinLateral((eb) =>
      eb
        .selectFrom('activity_calls as c')
        .select(['c.id', 'c.ts'])
        .whereRef('c.scope_id', '=', 's.id')
        .where('c.ts', '<', toTs)
        .$if(filter.fromTs !== undefined, (query) => query.where('c.ts', '>=', filter.fromTs!))
        .orderBy('c.ts', 'desc')
        .orderBy('c.id', 'desc')
        .limit(limit)
        .as('c'),
    )
    .select(['c.id', 'c.ts'])
    .orderBy('c.ts', 'desc')
    .orderBy('c.id', 'desc')
    .limit(limit)
    .execute();
}

export function findEvent(db: Db, id: number): Promise<ActivityEvent | undefined> {
  return db.selectFrom('activity_events').selectAll().where('id', '=', id).executeTakeFirst();
}

export type EventDimension = 'api_name' | 'operation_id' | 'status' | 'app_id' | 'plan_id' | 'consumer_org_id';

/**
 * The names shown for an id dimension. Apps, plans and consumer orgs are grouped by id — titles
 * repeat across consumer orgs and plan names across products — and labelled with the names the
 * events recorded (the latest name, should one have changed).
 */
const labelColumns: Record<
  EventDimension,
  ReadonlyArray<'app_name' | 'consumer_org_name' | 'plan_name' | 'product_name'>
> = {
  api_name: [],
  operation_id: [],
  status: [],
  app_id: ['app_name', 'consumer_org_name'],
  plan_id: ['plan_name', 'product_name'],
  consumer_org_id: ['consumer_org_name'],
};

export interface DimensionCount {
  key: string;
  calls: number;
  mean_ms: number;
  /** The recorded names of an id dimension (see labelColumns), e.g. app_name and consumer_org_name. */
  labels: Record<string, string>;
}

/** Call counts and mean latency grouped by one dimension (from the rollups for long windows). */
export async function countBy(db: Db, filter: EventFilter, dimension: EventDimension): Promise<DimensionCount[]> {
  const names = labelColumns[dimension].map((column) => sql<string>`max(${sql.ref(column)})`.as(column));
  const rows: Array<Record<string, unknown>> = usesRollup(filter)
    ? await rolled(db, filter)
        .select([
          sql<string>`${sql.ref(dimension)}`.as('key'),
          sql<number>`sum(calls)`.as('calls'),
          sql<number>`sum(latency_sum) / sum(calls)`.as('mean_ms'),
          ...names,
        ])
        .groupBy(dimension)
        .orderBy('calls', 'desc')
        .execute()
    : await filtered(db, filter)
        .select([
          sql<string>`${sql.ref(dimension)}`.as('key'),
          sql<number>`count(*)`.as('calls'),
          sql<number>`avg(latency_ms)`.as('mean_ms'),
          ...names,
        ])
        .groupBy(dimension)
        .orderBy('calls', 'desc')
        .execute();
  return rows.map((row) => ({
    key: String(row.key ?? ''),
    calls: Number(row.calls),
    mean_ms: Number(row.mean_ms),
    labels: Object.fromEntries(labelColumns[dimension].map((column) => [column, String(row[column] ?? '')])),
  }));
}

/**
 * Calls a subscription made from `fromTs` on that its plan's limits counted: those let in by the
 * plan-limit phase, whatever the assembly answered after (an assembly `rate-limit` policy's 429
 * included); not those refused before it (parameters, 400) or by it (429 `GW_RATE_LIMIT`; see
 * `countedByPlan`). From the hourly rollups' `plan_calls` when `fromTs` starts an hour (windows of
 * an hour or more, aligned to the epoch as the gateway's counters are), else from the events.
 * The gateway's counter stays the authority; this is what the analytics recorded.
 */
export async function subscriptionCallsSince(db: Db, subscriptionId: string, fromTs: number): Promise<number> {
  const row =
    fromTs % hourMs === 0
      ? await rolled(db, { subscriptionId, fromTs })
          .select(sql<number>`coalesce(sum(plan_calls), 0)`.as('calls'))
          .executeTakeFirst()
      : await filtered(db, { subscriptionId, fromTs })
          .select(sql<number>`count(*)`.as('calls'))
          .where('error_name', 'not in', [...refusedBeforePlanLimit])
          .executeTakeFirst();
  return Number(row?.calls ?? 0);
}

/** Calls per time bucket of `bucketMs`, with error counts (from the rollups for whole-hour buckets over long windows). */
export function callsOverTime(db: Db, filter: EventFilter, bucketMs: number) {
  // Integer division in both SQLite and PostgreSQL (ts is an integer / bigint).
  const size = Math.max(1, Math.floor(bucketMs));
  if (size % hourMs === 0 && usesRollup(filter)) {
    const bucket = sql<number>`(bucket_ts / ${sql.lit(size)}) * ${sql.lit(size)}`;
    return rolled(db, filter)
      .select([
        bucket.as('bucket'),
        sql<number>`sum(calls)`.as('calls'),
        sql<number>`sum(case when status >= 400 then calls else 0 end)`.as('errors'),
      ])
      .groupBy('bucket')
      .orderBy('bucket')
      .execute();
  }
  const bucket = sql<number>`(ts / ${sql.lit(size)}) * ${sql.lit(size)}`;
  return filtered(db, filter)
    .select([
      bucket.as('bucket'),
      (eb) => eb.fn.countAll<number>().as('calls'),
      sql<number>`sum(case when status >= 400 then 1 else 0 end)`.as('errors'),
    ])
    .groupBy('bucket')
    .orderBy('bucket')
    .execute();
}

/**
 * Latency percentiles (p50, p90, p99) over the filtered events, computed in the database:
 * PostgreSQL's `percentile_disc`, and on SQLite one indexed `ORDER BY … LIMIT 1 OFFSET n` per
 * percentile — no rows are brought into the process.
 */
export async function latencyPercentiles(
  db: Db,
  filter: EventFilter,
): Promise<{ count: number; p50: number; p90: number; p99: number }> {
  if (usesRollup(filter)) return histogramPercentiles(db, filter);
  const counted = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirst();
  const count = Number(counted?.count ?? 0);
  if (count === 0) return { count: 0, p50: 0, p90: 0, p99: 0 };
  if (isPostgres(db)) {
    const row = await filtered(db, filter)
      .select([
        sql<number>`percentile_disc(0.5) within group (order by latency_ms)`.as('p50'),
        sql<number>`percentile_disc(0.9) within group (order by latency_ms)`.as('p90'),
        sql<number>`percentile_disc(0.99) within group (order by latency_ms)`.as('p99'),
      ])
      .executeTakeFirstOrThrow();
    return { count, p50: Number(row.p50), p90: Number(row.p90), p99: Number(row.p99) };
  }
  const at = async (q: number) => {
    const row = await filtered(db, filter)
      .select('latency_ms')
      .orderBy('latency_ms')
      .limit(1)
      // The nearest-rank percentile, as percentile_disc computes it.
      .offset(Math.max(0, Math.ceil(q * count) - 1))
      .executeTakeFirst();
    return Number(row?.latency_ms ?? 0);
  };
  return { count, p50: await at(0.5), p90: await at(0.9), p99: await at(0.99) };
}

/**
 * Percentiles from the rollups' latency histogram: each is the upper bound of the bucket the
 * rank falls in (the last, open bucket reports its lower bound).
 */
async function histogramPercentiles(
  db: Db,
  filter: EventFilter,
): Promise<{ count: number; p50: number; p90: number; p99: number }> {
  const sums = latencyBounds.map((_, i) => sql<number>`sum(${sql.ref(`h${i}`)})`.as(`h${i}`));
  const row = (await rolled(db, filter).select(sums).executeTakeFirst()) as Record<string, unknown> | undefined;
  const counts = latencyBounds.map((_, i) => Number(row?.[`h${i}`] ?? 0));
  const count = counts.reduce((a, b) => a + b, 0);
  if (count === 0) return { count: 0, p50: 0, p90: 0, p99: 0 };
  const at = (q: number) => {
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) return Number.isFinite(latencyBounds[i]) ? latencyBounds[i] : latencyBounds[i - 1];
    }
    return latencyBounds[latencyBounds.length - 2];
  };
  return { count, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Deletes events older than `olderThanTs`, and the rollup hours wholly before it. Their scopes
 * (names and ids of the org, API, app, plan: no call's data) stay: a gateway's writer may hold a
 * scope's id to write the next call with.
 */
export async function purgeEvents(db: Db, olderThanTs: number): Promise<number> {
  const result = await db.deleteFrom('activity_calls').where('ts', '<', olderThanTs).executeTakeFirst();
  await db
    .deleteFrom('activity_rollup')
    .where('bucket_ts', '<=', olderThanTs - hourMs)
    .execute();
  return Number(result.numDeletedRows);
}
