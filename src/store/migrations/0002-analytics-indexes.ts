import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/** Indexes for the console's analytics: every query filters by org and catalog over a time range. */
export function analyticsIndexes(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createIndex('activity_events_scope_ts')
        .on('activity_events')
        .columns(['org_name', 'catalog_name', 'ts'])
        .execute();
      await db.schema
        .createIndex('activity_events_scope_api_ts')
        .on('activity_events')
        .columns(['org_name', 'catalog_name', 'api_name', 'ts'])
        .execute();
    },
  };
}
