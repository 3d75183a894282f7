import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * `changes.ref`: what a change touched, where a gateway can read only that again (issue 18): the
 * product of a subscription change, the app of an app or credential change. Null for older rows
 * and for changes that name nothing; a gateway then reads everything the kind may have touched.
 */
export function changeRefs(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('changes').addColumn('ref', 'text').execute();
    },
  };
}
