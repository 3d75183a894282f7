/**
 * Hourly analytics rollups: for every hour and combination of the console's dimensions (API,
 * operation, status, app, plan, product, subscription, consumer org — each by id and name, so
 * two orgs' apps of the same name stay apart), the number of calls, the sum of their
 * latencies and a latency histogram. The sink adds each batch to them as it writes the raw
 * events, so the console's charts over days read thousands of rows, not millions; percentiles
 * over long windows come from the histogram (to the bucket's upper bound).
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

type RollupRow = ActivityRollupTable;
type Histogram = Pick<ActivityRollupTable, `h${0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13}`>;

const histogramKeys = latencyBounds.map((_, i) => `h${i}`) as Array<keyof Histogram>;

/** Sums a batch of events into rollup rows, one per hour × dimensions combination. */
export function aggregateRollup(events: readonly NewActivityEvent[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const event of events) {
    const bucket = Math.floor(event.ts / hourMs) * hourMs;
    // The key spelled out (rollupDimensions' order): built once per event, on every call's path.
    const appId = event.app_id;
    const planId = event.plan_id ?? '';
    const subscriptionId = event.subscription_id ?? '';
    const consumerOrgId = event.consumer_org_id ?? '';
    const key = `${bucket}\u0000${event.org_name}\u0000${event.catalog_name}\u0000${event.api_name}\u0000${event.operation_id}\u0000${event.status}\u0000${appId}\u0000${event.app_name}\u0000${planId}\u0000${event.plan_name}\u0000${event.product_name}\u0000${subscriptionId}\u0000${consumerOrgId}\u0000${event.consumer_org_name}`;
    let row = rows.get(key);
    if (!row) {
      const empty = Object.fromEntries(histogramKeys.map((k) => [k, 0])) as Histogram;
      row = {
        bucket_ts: bucket,
        org_name: event.org_name,
        catalog_name: event.catalog_name,
        api_name: event.api_name,
        operation_id: event.operation_id,
        status: event.status,
        app_id: appId,
        app_name: event.app_name,
        plan_id: planId,
        plan_name: event.plan_name,
        product_name: event.product_name,
        subscription_id: subscriptionId,
        consumer_org_id: consumerOrgId,
        consumer_org_name: event.consumer_org_name,
        calls: 0,
        latency_sum: 0,
        ...empty,
      };
      rows.set(key, row);
    }
    row.calls++;
    row.latency_sum += event.latency_ms;
    row[histogramKeys[bucketOf(event.latency_ms)]]++;
  }
  return [...rows.values()];
}

/** The rollup columns in a fixed order (for prepared statements). */
export const rollupColumns = ['bucket_ts', ...rollupDimensions, 'calls', 'latency_sum', ...histogramKeys] as const;

/** `INSERT … ON CONFLICT … DO UPDATE` adding a rollup row to the one stored (SQLite and PostgreSQL). */
export const rollupUpsertSql = `insert into activity_rollup (${rollupColumns.join(', ')}) values (${rollupColumns.map(() => '?').join(', ')})
  on conflict (bucket_ts, ${rollupDimensions.join(', ')}) do update set ${['calls', 'latency_sum', ...histogramKeys].map((c) => `${c} = activity_rollup.${c} + excluded.${c}`).join(', ')}`;

/** Adds a batch of events to the rollups (one upsert per hour × dimensions combination). */
export async function addToRollup(db: Db, events: readonly NewActivityEvent[]): Promise<void> {
  for (const row of aggregateRollup(events)) {
    // `excluded` is the row that conflicted (SQLite and PostgreSQL name it alike).
    const additions = Object.fromEntries(
      ['calls', 'latency_sum', ...histogramKeys].map((column) => [
        column,
        sql<number>`${sql.ref(`activity_rollup.${column}`)} + ${sql.ref(`excluded.${column}`)}`,
      ]),
    ) as Record<'calls' | 'latency_sum' | keyof Histogram, RawBuilder<number>>;
    await db
      .insertInto('activity_rollup')
      .values(row)
      .onConflict((conflict) => conflict.columns(['bucket_ts', ...rollupDimensions]).doUpdateSet(additions))
      .execute();
  }
}

/**
 * Rebuilds the rollups from the stored events (migration, or after a bulk load); a migration
 * passes the dimensions of the table as it was then.
 */
export async function rebuildRollup(
  db: Kysely<unknown> | Db,
  dimensions: readonly string[] = rollupDimensions,
): Promise<void> {
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
  const dims = dimensions.join(', ');
  await sql.raw(`delete from activity_rollup`).execute(db as Kysely<unknown>);
  await sql
    .raw(
      `insert into activity_rollup (bucket_ts, ${dims}, calls, latency_sum, ${latencyBounds.map((_, i) => `h${i}`).join(', ')})
       select (ts / ${hourMs}) * ${hourMs} as bucket_ts, ${dims}, count(*) as calls, sum(latency_ms) as latency_sum, ${histogram}
       from activity_events group by (ts / ${hourMs}) * ${hourMs}, ${dims}`,
    )
    .execute(db as Kysely<unknown>);
}
