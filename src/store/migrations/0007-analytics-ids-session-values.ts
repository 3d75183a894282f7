import { sql } from 'kysely';
import type { CreateTableBuilder, Migration } from 'kysely';
import { latencyBucketCount, rebuildRollup, rollupDimensions } from '../rollup.ts';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * Issue 16: analytics keyed by ids (app, plan, subscription, consumer org) instead of names that
 * repeat across consumer orgs, and short-lived session values (flash, the subscribe wizard).
 * Events already stored get their ids from the apps and subscriptions that still exist; the
 * rollups are rebuilt with the new key (SQLite cannot change a table's unique constraint).
 */
export function analyticsIdsAndSessionValues(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
  return {
    async up(db: AnyDb) {
      for (const column of ['consumer_org_id', 'subscription_id', 'plan_id']) {
        await db.schema
          .alterTable('activity_events')
          .addColumn(column, 'text', (c) => c.notNull().defaultTo(''))
          .execute();
      }
      await sql`update activity_events set consumer_org_id = coalesce(
        (select apps.consumer_org_id from apps where apps.id = activity_events.app_id), '') where app_id <> ''`.execute(
        db,
      );
      await sql`update activity_events set subscription_id = coalesce((select s.id from subscriptions s
          join plans p on p.id = s.plan_id join products r on r.id = s.product_id
          where s.app_id = activity_events.app_id and p.name = activity_events.plan_name
            and r.name = activity_events.product_name order by s.created_at desc limit 1), '')
        where app_id <> '' and plan_name <> ''`.execute(db);
      await sql`update activity_events set plan_id = coalesce(
        (select s.plan_id from subscriptions s where s.id = activity_events.subscription_id), '')
        where subscription_id <> ''`.execute(db);
      await db.schema.dropTable('activity_rollup').execute();
      let table: CreateTableBuilder<'activity_rollup', string> = db.schema
        .createTable('activity_rollup')
        .addColumn('bucket_ts', bigint, (c) => c.notNull());
      for (const column of rollupDimensions) {
        table = table.addColumn(column, column === 'status' ? 'integer' : 'text', (c) => c.notNull());
      }
      table = table.addColumn('calls', bigint, (c) => c.notNull()).addColumn('latency_sum', 'real', (c) => c.notNull());
      for (let i = 0; i < latencyBucketCount; i++)
        table = table.addColumn(`h${i}`, bigint, (c) => c.notNull().defaultTo(0));
      await table.addUniqueConstraint('activity_rollup_key', ['bucket_ts', ...rollupDimensions]).execute();
      await db.schema
        .createIndex('activity_rollup_scope')
        .on('activity_rollup')
        .columns(['org_name', 'catalog_name', 'bucket_ts'])
        .execute();
      await db.schema
        .createIndex('activity_rollup_subscription')
        .on('activity_rollup')
        .columns(['subscription_id', 'bucket_ts'])
        .execute();
      await rebuildRollup(db, rollupDimensions, false);
      await db.schema
        .createTable('session_values')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('session_values_pk', ['session_id', 'name'])
        .execute();
    },
  };
}
