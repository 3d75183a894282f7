import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * `provider_users.role` (src/services/provider/roles.ts). Before roles every provider user could
 * do everything, so the users that exist keep that: each organization's first user (oldest, then
 * by id) becomes its `owner`, so the org has one that cannot be removed, and the others become
 * `administrator`, which may still do everything but give or take the owner role.
 */
export function providerUserRoles(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .alterTable('provider_users')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('viewer'))
        .execute();
      // The column's default is the weakest role (an insert that names none gets it); the users
      // that exist now keep what they could do.
      await sql`update provider_users set role = 'administrator'`.execute(db);
      await sql`update provider_users set role = 'owner' where id = (
        select oldest.id from provider_users oldest where oldest.org_id = provider_users.org_id
        order by oldest.created_at, oldest.id limit 1
      )`.execute(db);
    },
  };
}
