/**
 * Hourly analytics rollups: for every hour and combination of the console's dimensions (API,
 * operation, status, app, plan, product, subscription, consumer org — each by id and name, so
 * two orgs' apps of the same name stay apart), the number of calls, the sum of their
 * latencies, a latency histogram and the calls the plan's limits counted (`plan_calls`). The
 * sink adds each batch to them as it writes the raw events, so the console's charts over days
 * read thousands of rows, not millions; percentiles over long windows come from the histogram
 * (to the bucket's upper bound).
 */
import { sql } from 'kysely';
import type { Kysely, RawBuilder } from 'kysely';
import type { Db } from './store.ts';
import type { ActivityRollupTable, NewActivityEvent } from './schema.ts';

export const hourMs = 3_600_000;

/** Upper bounds (ms) of the latency histogram's buckets; the last is open-ended. */
export const latencyBounds = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  1000,
  2000,
  5000,
  10_000,
  Number.POSITIVE_INFINITY,
] as const;
export const latencyBucketCount = latencyBounds.length;

export const rollupDimensions = [
  'org_name',
  'catalog_name',
  'api_name',
  'operation_id',
  'status',
  'app_id',
  'app_name',
  'plan_id',
  'plan_name',
  'product_name',
  'subscription_id',
  'consumer_org_id',
  'consumer_org_name',
] as const;

function bucketOf(latencyMs: number): number {
  for (let i = 0; i < latencyBounds.length; i++) if (latencyMs <= latencyBounds[i]) return i;
  return latencyBounds.length - 1;
}

/**
 * Errors the gateway answers before its plan-limit phase counts the call (DESIGN §3: parameters
 * are checked before the limit), and the limit's own refusal: such calls of a subscription are
 * not in `plan_calls`. A required body found missing is a `GW_MISSING_PARAMETER` from after the
 * limit; the event cannot tell it from a missing parameter, so it is left out too.
 */
export const refusedBeforePlanLimit: ReadonlySet<string> = new Set([
  'GW_MISSING_PARAMETER',
  'GW_INVALID_PARAMETER',
  'GW_RATE_LIMIT',
]);

/** Whether the plan's limits counted this call: one of a subscription, let in by its plan limit. */
export function countedByPlan(event: Pick<NewActivityEvent, 'subscription_id' | 'error_name'>): boolean {
  return (event.subscription_id ?? '') !== '' && !refusedBeforePlanLimit.has(event.error_name);
}

/** A rollup row; `plan_calls` (migration 0014) is the part of `calls` the plan's limits counted. */
export type RollupRow = ActivityRollupTable;
type Histogram = Pick<ActivityRollupTable, `h${0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13}`>;

const histogramKeys = latencyBounds.map((_, i) => `h${i}`) as Array<keyof Histogram>;

// Up to this many rows a batch's rollups are found by comparing fields (most differ in the first one or
// two compared); past it, by a string key.
const rowsCompared = 32;

/** Whether `event` (in hour `bucket`) adds to `row`: every dimension equal. */
function sameKey(row: RollupRow, event: NewActivityEvent, bucket: number): boolean {
  return (
    row.status === event.status &&
    row.operation_id === event.operation_id &&
    row.bucket_ts === bucket &&
    row.api_name === event.api_name &&
    row.subscription_id === (event.subscription_id ?? '') &&
    row.app_id === event.app_id &&
    row.plan_id === (event.plan_id ?? '') &&
    row.catalog_name === event.catalog_name &&
    row.org_name === event.org_name &&
    row.app_name === event.app_name &&
    row.plan_name === event.plan_name &&
    row.product_name === event.product_name &&
    row.consumer_org_id === (event.consumer_org_id ?? '') &&
    row.consumer_org_name === event.consumer_org_name
  );
}

/** The fields that key a rollup row, as an event or a row has them. */
type KeyFields = Pick<NewActivityEvent, (typeof rollupDimensions)[number]>;

/** A row's key (rollupDimensions' order), for batches with more distinct rows than are compared. */
function keyOf(bucket: number, e: KeyFields): string {
  return `${bucket}\u0000${e.org_name}\u0000${e.catalog_name}\u0000${e.api_name}\u0000${e.operation_id}\u0000${e.status}\u0000${e.app_id}\u0000${e.app_name}\u0000${e.plan_id ?? ''}\u0000${e.plan_name}\u0000${e.product_name}\u0000${e.subscription_id ?? ''}\u0000${e.consumer_org_id ?? ''}\u0000${e.consumer_org_name}`;
}

function emptyRow(event: NewActivityEvent, bucket: number): RollupRow {
  return {
    bucket_ts: bucket,
    org_name: event.org_name,
    catalog_name: event.catalog_name,
    api_name: event.api_name,
    operation_id: event.operation_id,
    status: event.status,
    app_id: event.app_id,
    app_name: event.app_name,
    plan_id: event.plan_id ?? '',
    plan_name: event.plan_name,
    product_name: event.product_name,
    subscription_id: event.subscription_id ?? '',
    consumer_org_id: event.consumer_org_id ?? '',
    consumer_org_name: event.consumer_org_name,
    calls: 0,
    plan_calls: 0,
    latency_sum: 0,
    h0: 0,
    h1: 0,
    h2: 0,
    h3: 0,
    h4: 0,
    h5: 0,
    h6: 0,
    h7: 0,
    h8: 0,
    h9: 0,
    h10: 0,
    h11: 0,
    h12: 0,
    h13: 0,
  };
}

/**
 * Sums a batch of events into rollup rows, one per hour × dimensions combination, in the order
 * each first appears. This runs for every call the gateway logs: a batch usually sums into a
 * handful of rows, found by comparing fields (the strings of one API or app are mostly the same
 * objects, so most comparisons are of pointers); a string key per event, built and hashed, cost
 * four times as much. Past {@link rowsCompared} rows, a map by key takes over. The events may
 * come in parts (the sink hands a batch to the writer thread in chunks): the rows are those of
 * the whole batch all the same, and only they are kept between parts, not the events.
 */
export class RollupSum {
  private rows: RollupRow[] = [];
  private byKey: Map<string, RollupRow> | undefined;
  private last: RollupRow | undefined;

  /** Adds events to the rows. */
  add(events: readonly NewActivityEvent[]): void {
    const rows = this.rows;
    let byKey = this.byKey;
    let last = this.last;
    for (const event of events) {
      const bucket = Math.floor(event.ts / hourMs) * hourMs;
      let row = last !== undefined && sameKey(last, event, bucket) ? last : undefined;
      if (row === undefined && byKey === undefined) {
        for (const candidate of rows)
          if (sameKey(candidate, event, bucket)) {
            row = candidate;
            break;
          }
      }
      if (row === undefined && byKey !== undefined) {
        const key = keyOf(bucket, event);
        row = byKey.get(key);
        if (row === undefined) {
          row = emptyRow(event, bucket);
          byKey.set(key, row);
          rows.push(row);
        }
      } else if (row === undefined) {
        row = emptyRow(event, bucket);
        rows.push(row);
        if (rows.length > rowsCompared) byKey = new Map(rows.map((r) => [keyOf(r.bucket_ts, r), r]));
      }
      last = row;
      row.calls++;
      if (countedByPlan(event)) row.plan_calls++;
      row.latency_sum += event.latency_ms;
      row[histogramKeys[bucketOf(event.latency_ms)]]++;
    }
    this.byKey = byKey;
    this.last = last;
  }

  /** The rows summed so far; the next event starts a new sum. */
  take(): RollupRow[] {
    const rows = this.rows;
    this.rows = [];
    this.byKey = undefined;
    this.last = undefined;
    return rows;
  }
}

/** A batch's rollup rows ({@link RollupSum} of all its events at once). */
export function aggregateRollup(events: readonly NewActivityEvent[]): RollupRow[] {
  const sum = new RollupSum();
  sum.add(events);
  return sum.take();
}

/** What a rollup row sums, after its key. */
const sumColumns = ['calls', 'latency_sum', ...histogramKeys, 'plan_calls'] as const;

/** The rollup columns in a fixed order (for prepared statements). */
export const rollupColumns = ['bucket_ts', ...rollupDimensions, ...sumColumns] as const;

const rollupKey = `bucket_ts, ${rollupDimensions.join(', ')}`;
const addSums = sumColumns.map((c) => `${c} = activity_rollup.${c} + excluded.${c}`).join(', ');

/** `INSERT … ON CONFLICT … DO UPDATE` adding a rollup row to the one stored (SQLite and PostgreSQL). */
export const rollupUpsertSql = `insert into activity_rollup (${rollupColumns.join(', ')}) values (${rollupColumns.map(() => '?').join(', ')})
  on conflict (${rollupKey}) do update set ${addSums}`;

/** Orders rollup rows by their key: writers that lock rows in one order cannot deadlock each other. */
export function byRollupKey(a: RollupRow, b: RollupRow): number {
  if (a.bucket_ts !== b.bucket_ts) return a.bucket_ts - b.bucket_ts;
  for (const column of rollupDimensions) {
    const x = a[column];
    const y = b[column];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// 31 values per row: PostgreSQL takes at most 65 535 bind parameters per statement.
const rowsPerUpsert = 1000;

/**
 * Adds a batch of events to the rollups: one multi-row upsert, its rows in key order. Two gateway
 * nodes upserting the same rows in different orders deadlocked (40P01, ~3 batches in 30).
 */
export async function addToRollup(db: Db, events: readonly NewActivityEvent[]): Promise<void> {
  const rows = aggregateRollup(events).sort(byRollupKey);
  // `excluded` is the row that conflicted (SQLite and PostgreSQL name it alike).
  const additions = Object.fromEntries(
    sumColumns.map((column) => [
      column,
      sql<number>`${sql.ref(`activity_rollup.${column}`)} + ${sql.ref(`excluded.${column}`)}`,
    ]),
  ) as Record<(typeof sumColumns)[number], RawBuilder<number>>;
  for (let i = 0; i < rows.length; i += rowsPerUpsert) {
    await db
      .insertInto('activity_rollup')
      .values(rows.slice(i, i + rowsPerUpsert))
      .onConflict((conflict) => conflict.columns(['bucket_ts', ...rollupDimensions]).doUpdateSet(additions))
      .execute();
  }
}

/** The rollup rows of the events the `where` clause selects from `activity_events` (a GROUP BY of them). */
function rollupSelect(dimensions: readonly string[], planCalls: boolean, where: string): string {
  const histogram = latencyBounds
    .map((bound, i) => {
      const low = i === 0 ? null : latencyBounds[i - 1];
      const condition = Number.isFinite(bound)
        ? low === null
          ? `latency_ms <= ${bound}`
          : `latency_ms > ${low} and latency_ms <= ${bound}`
        : `latency_ms > ${low}`;
      return `sum(case when ${condition} then 1 else 0 end) as h${i}`;
    })
    .join(', ');
  const refused = [...refusedBeforePlanLimit].map((name) => `'${name}'`).join(', ');
  const counted = planCalls
    ? `, sum(case when subscription_id <> '' and error_name not in (${refused}) then 1 else 0 end) as plan_calls`
    : '';
  const dims = dimensions.join(', ');
  return `insert into activity_rollup (bucket_ts, ${dims}, calls, latency_sum, ${histogramKeys.join(', ')}${planCalls ? ', plan_calls' : ''})
    select (ts / ${hourMs}) * ${hourMs} as bucket_ts, ${dims}, count(*) as calls, sum(latency_ms) as latency_sum, ${histogram}${counted}
    from activity_events where ${where} group by (ts / ${hourMs}) * ${hourMs}, ${dims}`;
}

/**
 * The writer thread's rollups when some calls of its batch were stored already (the rows summed
 * beforehand counted those too): the calls from the first id its transaction inserted on. On
 * SQLite, with AUTOINCREMENT and the write lock held, those are the transaction's own.
 */
export const rollupSinceSql = `${rollupSelect(rollupDimensions, true, 'id >= ?')}
  on conflict (${rollupKey}) do update set ${addSums}`;

/**
 * Rebuilds the rollups from the stored events (migration, or after a bulk load); a migration
 * passes the dimensions of the table as it was then, and whether it had `plan_calls`.
 */
export async function rebuildRollup(
  db: Kysely<unknown> | Db,
  dimensions: readonly string[] = rollupDimensions,
  planCalls = true,
): Promise<void> {
  await sql.raw(`delete from activity_rollup`).execute(db as Kysely<unknown>);
  await sql.raw(rollupSelect(dimensions, planCalls, 'true')).execute(db as Kysely<unknown>);
}
