import { sql } from 'kysely';
import type { Migration } from 'kysely';
import { rebuildRollup } from '../rollup.ts';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * Activity calls get a unique key, their time and the gateway's transaction id, so a batch written
 * again (its commit landed, the answer was lost) stores and counts its calls once: the writers
 * skip a call stored already and add only the calls inserted to the rollups. The key's index
 * replaces the one on `ts` alone, which it serves as well (purges, the newest events). Calls
 * stored twice before are kept once (the first).
 *
 * The rollups get `plan_calls`, the calls the plan's limits counted (the portal's "used"): not
 * those refused before the plan-limit phase or by it. Rebuilt from the stored events, which also
 * takes out what the calls stored twice had added.
 */
export function activityCallKeyAndPlanCalls(dialect: DialectName): Migration {
  return {
    async up(db: AnyDb) {
      await sql`delete from activity_calls where id in (select later.id from activity_calls later
        join activity_calls earlier on earlier.ts = later.ts and earlier.tx_id = later.tx_id and earlier.id < later.id)`.execute(
        db,
      );
      await db.schema
        .createIndex('activity_calls_ts_tx')
        .unique()
        .on('activity_calls')
        .columns(['ts', 'tx_id'])
        .execute();
      await db.schema.dropIndex('activity_calls_ts').execute();
      await db.schema
        .alterTable('activity_rollup')
        .addColumn('plan_calls', bigintType(dialect), (c) => c.notNull().defaultTo(0))
        .execute();
      await rebuildRollup(db, rollupDimensions, true);
    },
  };
}

/** The rollup's dimensions, as of this migration (rollup.ts keeps the live list). */
const rollupDimensions = [
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
