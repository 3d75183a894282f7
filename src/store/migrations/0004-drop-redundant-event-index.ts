import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * Drops `activity_events_api_ts`: every analytics query filters by org and catalog, so
 * `activity_events_scope_api_ts` serves what it served, and each activity event paid for one
 * more index insert on every call.
 */
export function dropRedundantEventIndex(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.dropIndex('activity_events_api_ts').ifExists().execute();
    },
  };
}
