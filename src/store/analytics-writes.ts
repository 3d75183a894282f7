/**
 * Activity events: the writes. Each event is one row of `activity_calls` pointing at its scope in
 * `activity_scopes` (the names and ids shared by every call of one subscription to one
 * operation, inserted once); both writers also add each event to the hourly rollups. Multi-row
 * inserts through Kysely, and on SQLite statements prepared once per database.
 *
 * A call is keyed by its time and the gateway's transaction id (unique, migration 0014): a batch
 * written again — its commit landed, the answer was lost, the sink tried once more — skips the
 * calls stored already, and only the calls inserted add to the rollups, in the same transaction.
 */
import type SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import type { Insertable } from 'kysely';
import type { Db } from './store.ts';
import type { ActivityCallTable, NewActivityEvent } from './schema.ts';
import { addToRollup, aggregateRollup, rollupColumns, rollupUpsertSql } from './rollup.ts';
import type { RollupRow } from './rollup.ts';

// PostgreSQL accepts at most 65 535 bind parameters per statement; 16 columns per call row.
const rowsPerInsert = 1000;

/** The columns of a scope, in the order of its values ({@link scopeValues}). */
export const scopeColumns = [
  'org_name',
  'catalog_name',
  'api_name',
  'api_version',
  'operation_id',
  'app_id',
  'app_name',
  'consumer_org_id',
  'consumer_org_name',
  'subscription_id',
  'plan_id',
  'product_name',
  'plan_name',
] as const satisfies ReadonlyArray<keyof NewActivityEvent>;

/** A call's own columns after `scope_id`, in the order of its values ({@link callValues}). */
export const callColumns = [
  'ts',
  'tx_id',
  'verb',
  'path',
  'status',
  'latency_ms',
  'backend_ms',
  'client_id',
  'user_name',
  'error_name',
  'content',
  'request_headers',
  'request_body',
  'response_headers',
  'response_body',
] as const satisfies ReadonlyArray<keyof NewActivityEvent>;

type ScopeColumn = (typeof scopeColumns)[number];

/** An event's scope values in {@link scopeColumns} order (written out: see {@link callValues}). */
export function scopeValues(e: NewActivityEvent): string[] {
  return [
    e.org_name,
    e.catalog_name,
    e.api_name,
    e.api_version,
    e.operation_id,
    e.app_id,
    e.app_name,
    e.consumer_org_id ?? '',
    e.consumer_org_name,
    e.subscription_id ?? '',
    e.plan_id ?? '',
    e.product_name,
    e.plan_name,
  ];
}

/** Whether `e` belongs to the scope with these values (the strings of one snapshot are mostly the same objects). */
export function inScope(values: readonly string[], e: NewActivityEvent): boolean {
  return (
    values[4] === e.operation_id &&
    values[9] === (e.subscription_id ?? '') &&
    values[5] === e.app_id &&
    values[2] === e.api_name &&
    values[3] === e.api_version &&
    values[1] === e.catalog_name &&
    values[0] === e.org_name &&
    values[6] === e.app_name &&
    values[7] === (e.consumer_org_id ?? '') &&
    values[8] === e.consumer_org_name &&
    values[10] === (e.plan_id ?? '') &&
    values[11] === e.product_name &&
    values[12] === e.plan_name
  );
}

/**
 * A scope's key: each value with its length in front, so no two scopes share one whatever their
 * texts contain (an app's title is the consumer's to choose).
 */
export function scopeKey(values: readonly string[]): string {
  let key = '';
  for (const value of values) key += `${value.length}:${value}`;
  return key;
}

/**
 * One event's own values in {@link callColumns} order, written out: mapping a column list per
 * row was 3 % of a gateway's CPU with the activity log on. A test checks both stay in step.
 */
export function callValues(e: NewActivityEvent): unknown[] {
  return [
    e.ts,
    e.tx_id,
    e.verb,
    e.path,
    e.status,
    e.latency_ms,
    e.backend_ms,
    e.client_id,
    e.user_name ?? '',
    e.error_name,
    e.content,
    e.request_headers ?? null,
    e.request_body ?? null,
    e.response_headers ?? null,
    e.response_body ?? null,
  ];
}

/** Adds a scope unless it is stored already (the unique key of all its columns). */
export const scopeInsertSql = `insert into activity_scopes (${scopeColumns.join(', ')}) values (${scopeColumns.map(() => '?').join(', ')}) on conflict do nothing`;

/** A stored scope's id, by its values in {@link scopeColumns} order. */
export const scopeSelectSql = `select id from activity_scopes where ${scopeColumns.map((c) => `${c} = ?`).join(' and ')}`;

/** The insert of one call: its scope's id, then its values in {@link callColumns} order; none when stored already. */
export const callInsertSql = `insert into activity_calls (scope_id, ${callColumns.join(', ')}) values (?, ${callColumns.map(() => '?').join(', ')})
  on conflict (ts, tx_id) do nothing`;

/** A call's identity: its time and the gateway's transaction id (the unique key of `activity_calls`). */
function callKey(call: { ts: number | string; tx_id: string }): string {
  return `${Number(call.ts)}:${call.tx_id}`;
}

/**
 * The ids of these scopes (distinct, by key), stored first where new: one multi-row insert and one
 * select for the whole batch, whatever the number of scopes in it (inside the caller's transaction).
 */
async function scopeIds(db: Db, scopes: Map<string, readonly string[]>): Promise<Map<string, number>> {
  // In key order: two gateway nodes adding the same new scopes must not wait on each other in a circle.
  const all = [...scopes.keys()].sort().map((key) => scopes.get(key)!);
  const ids = new Map<string, number>();
  // 13 parameters per scope, twice: well within either database's bound per batch of 500.
  await db
    .insertInto('activity_scopes')
    .values(
      all.map(
        (values) =>
          Object.fromEntries(scopeColumns.map((column, i) => [column, values[i]])) as Record<ScopeColumn, string>,
      ),
    )
    .onConflict((conflict) => conflict.doNothing())
    .execute();
  const tuples = all.map((values) => sql`(${sql.join(values)})`);
  const found = await sql<Record<string, string | number>>`select id, ${sql.join(scopeColumns.map((c) => sql.ref(c)))}
    from activity_scopes where (${sql.join(scopeColumns.map((c) => sql.ref(c)))}) in (values ${sql.join(tuples)})`.execute(
    db,
  );
  // PostgreSQL's bigserial comes back as text.
  for (const row of found.rows) ids.set(scopeKey(scopeColumns.map((c) => String(row[c]))), Number(row.id));
  return ids;
}

/** Writes events (their scopes first, once each) and adds them to the hourly rollups (call inside a transaction). */
export async function insertEvents(db: Db, events: NewActivityEvent[]): Promise<void> {
  if (events.length === 0) return;
  const scopes = new Map<string, readonly string[]>();
  const keys = events.map((e) => {
    const values = scopeValues(e);
    const key = scopeKey(values);
    scopes.set(key, values);
    return key;
  });
  const ids = await scopeIds(db, scopes);
  const rows = events.map((e, n): Insertable<ActivityCallTable> => {
    const values = callValues(e);
    const row = Object.fromEntries(callColumns.map((column, i) => [column, values[i]]));
    return { scope_id: ids.get(keys[n])!, ...(row as Omit<Insertable<ActivityCallTable>, 'scope_id'>) };
  });
  const inserted = new Map<string, number>();
  for (let i = 0; i < rows.length; i += rowsPerInsert) {
    const added = await db
      .insertInto('activity_calls')
      .values(rows.slice(i, i + rowsPerInsert))
      .onConflict((conflict) => conflict.columns(['ts', 'tx_id']).doNothing())
      .returning(['ts', 'tx_id'])
      .execute();
    for (const call of added) inserted.set(callKey(call), (inserted.get(callKey(call)) ?? 0) + 1);
  }
  await addToRollup(db, inserted.size === events.length ? events : taken(events, inserted));
}

/** The events a multi-row insert stored (each key as many times as it was inserted: once). */
function taken(events: readonly NewActivityEvent[], inserted: Map<string, number>): NewActivityEvent[] {
  return events.filter((e) => {
    const key = callKey(e);
    const left = inserted.get(key) ?? 0;
    if (left > 0) inserted.set(key, left - 1);
    return left > 0;
  });
}

/** Rollup rows as the prepared upsert takes them: values in {@link rollupColumns} order. */
export function rollupValues(rows: readonly RollupRow[]): unknown[][] {
  return rows.map((row) => rollupColumns.map((column) => row[column]));
}

interface SqliteWriter {
  write(events: readonly NewActivityEvent[]): void;
}

const sqliteWriters = new WeakMap<SqliteDatabase.Database, SqliteWriter>();

/**
 * The same write as {@link insertEvents} on SQLite through statements prepared once per database,
 * in one transaction: the activity log is on every call, and building and preparing SQL per batch
 * was a tenth of the gateway's CPU. Scope ids are remembered once their transaction committed.
 */
export function insertEventsSqlite(sqlite: SqliteDatabase.Database, events: readonly NewActivityEvent[]): void {
  let writer = sqliteWriters.get(sqlite);
  if (!writer) {
    const addScope = sqlite.prepare(scopeInsertSql);
    const findScope = sqlite.prepare(scopeSelectSql).pluck();
    const insert = sqlite.prepare(callInsertSql);
    const upsert = sqlite.prepare(rollupUpsertSql);
    const known = new Map<string, number>();
    const write = sqlite.transaction((batch: readonly NewActivityEvent[], added: Map<string, number>) => {
      let stored: NewActivityEvent[] | undefined;
      for (let i = 0; i < batch.length; i++) {
        const e = batch[i];
        const values = scopeValues(e);
        const key = scopeKey(values);
        let id = known.get(key) ?? added.get(key);
        if (id === undefined) {
          addScope.run(...values);
          id = findScope.get(...values) as number;
          added.set(key, id);
        }
        const { changes } = insert.run(id, ...callValues(e));
        if (changes === 0) stored ??= batch.slice(0, i);
        else stored?.push(e);
      }
      for (const row of rollupValues(aggregateRollup(stored ?? batch))) upsert.run(...row);
    });
    writer = {
      write: (batch) => {
        const added = new Map<string, number>();
        write(batch, added);
        if (known.size + added.size > maxKnownScopes) known.clear();
        for (const [key, id] of added) known.set(key, id);
      },
    };
    sqliteWriters.set(sqlite, writer);
  }
  writer.write(events);
}

/** Scope ids a writer remembers at most; past it, it forgets them all and finds them again. */
export const maxKnownScopes = 10_000;
