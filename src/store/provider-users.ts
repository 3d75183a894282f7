/** Provider users' roles, passwords and removal (the management registry); see also orgs.ts. */
import { lockRows } from './row-locks.ts';
import type { Db } from './store.ts';
import type { DialectName } from './migrations/index.ts';
import type { ProviderRole, ProviderUser } from './schema.ts';

/** The org's user named `username`, or undefined (a user of another org is not found either). */
export function findOrgProviderUser(db: Db, orgId: string, username: string): Promise<ProviderUser | undefined> {
  return db
    .selectFrom('provider_users')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('username', '=', username)
    .executeTakeFirst();
}

/** Whether the org has any provider user yet. */
export async function orgHasProviderUsers(db: Db, orgId: string): Promise<boolean> {
  const row = await db.selectFrom('provider_users').select('id').where('org_id', '=', orgId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Holds the org's row until the transaction ends, so two role changes or removals in one org
 * run one after the other and cannot both take away the last owner (PostgreSQL; SQLite's
 * transactions hold the write lock from their start, sqlite-dialect.ts).
 */
export function lockOrgUsers(db: Db, dialect: DialectName, orgId: string): Promise<void> {
  return lockRows(db, dialect, 'provider_orgs', [orgId]);
}

export async function countOrgOwners(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('provider_users')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function setProviderUserRole(db: Db, userId: string, role: ProviderRole): Promise<void> {
  await db.updateTable('provider_users').set({ role }).where('id', '=', userId).execute();
}

export async function setProviderUserPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db.updateTable('provider_users').set({ password_hash: passwordHash }).where('id', '=', userId).execute();
}

/** Removes the user row (its sessions are ended by the caller, in the same transaction). */
export async function deleteProviderUser(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('provider_users').where('id', '=', userId).execute();
}
