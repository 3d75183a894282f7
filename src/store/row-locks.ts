/**
 * Row locks that serialise a check and the write it allows ("at most N", "not the last owner",
 * "one base path per catalog"): each transaction that would write re-reads under the lock, so two
 * cannot both pass a check only one of them may pass. PostgreSQL takes `select … for update`;
 * SQLite needs none (its write transactions hold the database's write lock from their start,
 * sqlite-dialect.ts). Call inside a transaction.
 */
import { sql } from 'kysely';
import type { Db } from './store.ts';
import type { DialectName } from './migrations/index.ts';

/** The tables whose rows are locked, by their `id`. */
export type LockedTable = 'catalogs' | 'provider_orgs' | 'consumer_orgs' | 'apps';

/** Holds the rows of `ids` (in a stable order, so two lockers of several cannot wait on each other in a circle). */
export async function lockRows(
  db: Db,
  dialect: DialectName,
  table: LockedTable,
  ids: readonly string[],
): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const id of [...ids].sort())
    await sql`select id from ${sql.table(table)} where id = ${id} for update`.execute(db);
}
