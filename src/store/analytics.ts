/** Activity events: batched inserts, and the queries the console and portal ask. */
import { sql } from 'kysely';
import type { Db } from './store.ts';
import type { ActivityEvent, NewActivityEvent } from './schema.ts';

// PostgreSQL accepts at most 65 535 bind parameters per statement; 24 columns per row.
const rowsPerInsert = 1000;

/** Writes events in multi-row inserts. */
export async function insertEvents(db: Db, events: NewActivityEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += rowsPerInsert) {
    await db.insertInto('activity_events').values(events.slice(i, i + rowsPerInsert)).execute();
  }
}

export interface EventFilter {
  orgName?: string;
  catalogName?: string;
  apiName?: string;
  appId?: string;
  fromTs?: number;
  toTs?: number;
}

function filtered(db: Db, filter: EventFilter) {
  let query = db.selectFrom('activity_events');
  if (filter.orgName !== undefined) query = query.where('org_name', '=', filter.orgName);
  if (filter.catalogName !== undefined) query = query.where('catalog_name', '=', filter.catalogName);
  if (filter.apiName !== undefined) query = query.where('api_name', '=', filter.apiName);
  if (filter.appId !== undefined) query = query.where('app_id', '=', filter.appId);
  if (filter.fromTs !== undefined) query = query.where('ts', '>=', filter.fromTs);
  if (filter.toTs !== undefined) query = query.where('ts', '<', filter.toTs);
  return query;
}

/** The latest events, newest first (payload columns included). */
export function listEvents(db: Db, filter: EventFilter, limit = 100): Promise<ActivityEvent[]> {
  return filtered(db, filter).selectAll().orderBy('ts', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export function findEvent(db: Db, id: number): Promise<ActivityEvent | undefined> {
  return db.selectFrom('activity_events').selectAll().where('id', '=', id).executeTakeFirst();
}

export type EventDimension = 'api_name' | 'operation_id' | 'status' | 'app_name' | 'plan_name' | 'product_name' | 'consumer_org_name';

/** Call counts and mean latency grouped by one dimension. */
export function countBy(db: Db, filter: EventFilter, dimension: EventDimension) {
  return filtered(db, filter)
    .select([
      sql<string>`${sql.ref(dimension)}`.as('key'),
      (eb) => eb.fn.countAll<number>().as('calls'),
      (eb) => eb.fn.avg<number>('latency_ms').as('mean_ms'),
    ])
    .groupBy(dimension)
    .orderBy('calls', 'desc')
    .execute();
}

/** Calls per time bucket of `bucketMs`, with error counts. */
export function callsOverTime(db: Db, filter: EventFilter, bucketMs: number) {
  // Integer division in both SQLite and PostgreSQL (ts is an integer / bigint).
  const size = Math.max(1, Math.floor(bucketMs));
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
export async function latencyPercentiles(db: Db, filter: EventFilter): Promise<{ count: number; p50: number; p90: number; p99: number }> {
  const counted = await filtered(db, filter).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirst();
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

function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter.constructor.name.startsWith('Postgres');
}

/** Deletes events older than `olderThanTs`. */
export async function purgeEvents(db: Db, olderThanTs: number): Promise<number> {
  const result = await db.deleteFrom('activity_events').where('ts', '<', olderThanTs).executeTakeFirst();
  return Number(result.numDeletedRows);
}
