import { sql } from 'kysely';
import type { CreateTableBuilder, Migration } from 'kysely';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * Issue 18: an activity event is stored as one narrow row per call (`activity_calls`) pointing at
 * its scope (`activity_scopes`): the org, catalog, API, operation, app, consumer org, product,
 * plan and subscription names and ids, which are the same for every call of one subscription to
 * one operation. Before, each call wrote those thirteen texts again with it and three indexes
 * over them; the write was most of what the activity log cost the gateway.
 *
 * `activity_events` becomes a view joining the two with the columns it had, so every query reads
 * as before. Stored events move over with their ids.
 */
export function activityScopes(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
  return {
    async up(db: AnyDb) {
      const scopes = db.schema.createTable('activity_scopes');
      let table: CreateTableBuilder<'activity_scopes', string> =
        dialect === 'postgres'
          ? scopes.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : scopes.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
      for (const column of scopeColumns) table = table.addColumn(column, 'text', (c) => c.notNull());
      // The key the writers find a scope by; its leading columns serve the console's filters too.
      await table.addUniqueConstraint('activity_scopes_key', [...scopeColumns]).execute();

      const calls = db.schema.createTable('activity_calls');
      await (
        dialect === 'postgres'
          ? calls.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : calls.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        // No foreign key: a writer inserts the scope in the same transaction, and the check
        // would be one more index probe per call. The view's inner join is the consistency check.
        .addColumn('scope_id', bigint, (c) => c.notNull())
        .addColumn('ts', bigint, (c) => c.notNull())
        .addColumn('tx_id', 'text', (c) => c.notNull())
        .addColumn('verb', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'real', (c) => c.notNull())
        .addColumn('backend_ms', 'real', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('error_name', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('request_headers', 'text')
        .addColumn('request_body', 'text')
        .addColumn('response_headers', 'text')
        .addColumn('response_body', 'text')
        .execute();

      const scopeList = scopeColumns.join(', ');
      await sql
        .raw(`insert into activity_scopes (${scopeList}) select distinct ${scopeList} from activity_events`)
        .execute(db);
      if (dialect === 'postgres') {
        // Thirteen equalities make PostgreSQL expect one matching row and join by nested loop
        // (each scope probing every event of its org: 51 s for 200 000 events); a hash join: 0.1 s.
        await sql`analyze activity_scopes`.execute(db);
        await sql`set local enable_nestloop = off`.execute(db);
      }
      await sql
        .raw(
          `insert into activity_calls (id, scope_id, ${callColumns.join(', ')})
           select e.id, s.id, ${callColumns.map((c) => `e.${c}`).join(', ')}
           from activity_events e join activity_scopes s on ${scopeColumns.map((c) => `s.${c} = e.${c}`).join(' and ')}`,
        )
        .execute(db);
      if (dialect === 'postgres') {
        await sql`reset enable_nestloop`.execute(db);
        // Ids were copied: the sequence continues after the last one.
        await sql`select setval(pg_get_serial_sequence('activity_calls', 'id'),
          (select coalesce(max(id), 0) + 1 from activity_calls), false)`.execute(db);
      }
      await db.schema.dropTable('activity_events').execute();

      await db.schema.createIndex('activity_calls_ts').on('activity_calls').column('ts').execute();
      await db.schema.createIndex('activity_calls_scope_ts').on('activity_calls').columns(['scope_id', 'ts']).execute();
      await sql
        .raw(
          `create view activity_events as select c.id, ${viewColumns.map((c) => (scopeColumns.includes(c as ScopeColumn) ? `s.${c}` : `c.${c}`)).join(', ')}
           from activity_calls c join activity_scopes s on s.id = c.scope_id`,
        )
        .execute(db);
      await insertThroughView(db, dialect);
    },
  };
}

/**
 * Gateways of the previous version go on inserting into `activity_events` during a rolling
 * upgrade (docs/operations.md: migrations keep old gateway nodes working): an insert into the view
 * finds or adds the scope and inserts the call. The ids and the user name are optional there, as
 * the table's defaults made them.
 */
async function insertThroughView(db: AnyDb, dialect: DialectName): Promise<void> {
  const optional = new Set(['consumer_org_id', 'subscription_id', 'plan_id', 'user_name']);
  const value = (column: string) => (optional.has(column) ? `coalesce(new.${column}, '')` : `new.${column}`);
  const scopeValues = scopeColumns.map(value).join(', ');
  const scopeMatch = scopeColumns.map((c) => `${c} = ${value(c)}`).join(' and ');
  const callValues = callColumns.map(value).join(', ');
  const scopeList = scopeColumns.join(', ');
  const callList = callColumns.join(', ');
  if (dialect === 'sqlite') {
    await sql
      .raw(
        `create trigger activity_events_insert instead of insert on activity_events begin
           insert or ignore into activity_scopes (${scopeList}) values (${scopeValues});
           insert into activity_calls (scope_id, ${callList})
             values ((select id from activity_scopes where ${scopeMatch}), ${callValues});
         end`,
      )
      .execute(db);
    return;
  }
  await sql
    .raw(
      `create function activity_events_insert() returns trigger language plpgsql as $$
       declare scope bigint;
       begin
         insert into activity_scopes (${scopeList}) values (${scopeValues}) on conflict do nothing;
         select id into scope from activity_scopes where ${scopeMatch};
         insert into activity_calls (scope_id, ${callList}) values (scope, ${callValues});
         return new;
       end $$`,
    )
    .execute(db);
  await sql`create trigger activity_events_insert instead of insert on activity_events
    for each row execute function activity_events_insert()`.execute(db);
}

/** The scope's columns, as of this migration (analytics-writes.ts keeps the live list). */
const scopeColumns = [
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
] as const;
type ScopeColumn = (typeof scopeColumns)[number];

const callColumns = [
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
] as const;

/** The view's columns after `id`: those `activity_events` had, in its order. */
const viewColumns = [
  'ts',
  'tx_id',
  'org_name',
  'catalog_name',
  'api_name',
  'api_version',
  'operation_id',
  'verb',
  'path',
  'status',
  'latency_ms',
  'backend_ms',
  'client_id',
  'app_id',
  'app_name',
  'consumer_org_name',
  'product_name',
  'plan_name',
  'error_name',
  'content',
  'request_headers',
  'request_body',
  'response_headers',
  'response_body',
  'user_name',
  'consumer_org_id',
  'subscription_id',
  'plan_id',
] as const;
