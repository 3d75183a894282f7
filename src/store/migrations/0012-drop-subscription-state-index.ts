import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * Drops `subscriptions_state` (issue 18). Nearly every row is `active`, so it narrows nothing, and
 * SQLite chose it over the primary key for a reload's read of every live subscription in pages by
 * id, sorting each page again (100 000 rows: 677 ms in pages against 217 ms without it). The one
 * query that filters by state alone, a catalog's pending subscriptions, goes through its products
 * and `subscriptions_product_state` instead.
 */
export function dropSubscriptionStateIndex(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.dropIndex('subscriptions_state').ifExists().execute();
    },
  };
}
