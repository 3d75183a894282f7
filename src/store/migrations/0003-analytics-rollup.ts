import type { Migration } from 'kysely';
import { latencyBucketCount, rebuildRollup } from '../rollup.ts';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/** Hourly analytics rollups (see ../analytics.ts), filled from the events already stored. */
export function analyticsRollup(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
  return {
    async up(db: AnyDb) {
      let table = db.schema
        .createTable('activity_rollup')
        .addColumn('bucket_ts', bigint, (c) => c.notNull())
        .addColumn('org_name', 'text', (c) => c.notNull())
        .addColumn('catalog_name', 'text', (c) => c.notNull())
        .addColumn('api_name', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('app_name', 'text', (c) => c.notNull())
        .addColumn('plan_name', 'text', (c) => c.notNull())
        .addColumn('product_name', 'text', (c) => c.notNull())
        .addColumn('consumer_org_name', 'text', (c) => c.notNull())
        .addColumn('calls', bigint, (c) => c.notNull())
        .addColumn('latency_sum', 'real', (c) => c.notNull());
      for (let i = 0; i < latencyBucketCount; i++)
        table = table.addColumn(`h${i}`, bigint, (c) => c.notNull().defaultTo(0));
      await table
        .addUniqueConstraint('activity_rollup_key', [
          'bucket_ts',
          'org_name',
          'catalog_name',
          'api_name',
          'operation_id',
          'status',
          'app_name',
          'plan_name',
          'product_name',
          'consumer_org_name',
        ])
        .execute();
      await db.schema
        .createIndex('activity_rollup_scope')
        .on('activity_rollup')
        .columns(['org_name', 'catalog_name', 'bucket_ts'])
        .execute();
      await rebuildRollup(
        db,
        [
          'org_name',
          'catalog_name',
          'api_name',
          'operation_id',
          'status',
          'app_name',
          'plan_name',
          'product_name',
          'consumer_org_name',
        ],
        false,
      );
    },
  };
}
