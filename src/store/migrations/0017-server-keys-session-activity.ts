import { sql } from 'kysely';
import type { Migration } from 'kysely';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * Pre-sessions become stateless and web sessions get an idle timeout:
 * - `server_keys`: per-installation secret keys shared by every node (the pre-session cookie's
 *   HMAC key), created on first use;
 * - `sessions.last_seen`: the last recorded activity, epoch milliseconds. Sessions that exist now
 *   count as active at the upgrade rather than being signed out by it;
 * - the `pre-portal`/`pre-provider` rows are deleted: nothing reads them any more (their cookies
 *   are not signed, so each visitor simply gets a new pre-session cookie).
 */
export function serverKeysAndSessionActivity(dialect: DialectName): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('server_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('sessions')
        .addColumn('last_seen', bigintType(dialect), (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update sessions set last_seen = ${Date.now()}`.execute(db);
      const pre = ['pre-portal', 'pre-provider'];
      const preIds = db.selectFrom('sessions').select('id').where('kind', 'in', pre);
      await db.deleteFrom('session_values').where('session_id', 'in', preIds).execute();
      await db.deleteFrom('sessions').where('kind', 'in', pre).execute();
    },
  };
}
