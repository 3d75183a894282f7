/** Provider organizations, their catalogs, and provider users (the management registry). */
import { lockRows } from './row-locks.ts';
import type { Db } from './store.ts';
import type { Catalog, ProviderOrg, ProviderRole, ProviderUser } from './schema.ts';
import { newId, now } from './secrets.ts';

export async function createOrg(db: Db, input: { name: string; title: string }): Promise<ProviderOrg> {
  const org: ProviderOrg = { id: newId(), name: input.name, title: input.title, created_at: now() };
  await db.insertInto('provider_orgs').values(org).execute();
  return org;
}

export function findOrgByName(db: Db, name: string): Promise<ProviderOrg | undefined> {
  return db.selectFrom('provider_orgs').selectAll().where('name', '=', name).executeTakeFirst();
}

export function findOrgById(db: Db, id: string): Promise<ProviderOrg | undefined> {
  return db.selectFrom('provider_orgs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listOrgs(db: Db): Promise<ProviderOrg[]> {
  return db.selectFrom('provider_orgs').selectAll().orderBy('name').execute();
}

export async function createCatalog(db: Db, input: { orgId: string; name: string; title: string }): Promise<Catalog> {
  const catalog: Catalog = {
    id: newId(),
    org_id: input.orgId,
    name: input.name,
    title: input.title,
    created_at: now(),
  };
  await db.insertInto('catalogs').values(catalog).execute();
  return catalog;
}

export function findCatalog(db: Db, orgId: string, name: string): Promise<Catalog | undefined> {
  return db.selectFrom('catalogs').selectAll().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
}

export function findCatalogById(db: Db, id: string): Promise<Catalog | undefined> {
  return db.selectFrom('catalogs').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Serialises, until the transaction ends, the writes that decide what a catalog serves
 * (publish, lifecycle steps, a served API's new base path): each re-reads and re-checks the
 * catalog under this lock, so two of them cannot both pass a check that only one of them may
 * pass. Call inside a transaction; ids in a stable order when locking several. SQLite needs no
 * row lock: its write transactions hold the database's write lock from the start
 * (sqlite-dialect.ts).
 */
export function lockCatalogs(db: Db, dialect: 'sqlite' | 'postgres', ids: readonly string[]): Promise<void> {
  return lockRows(db, dialect, 'catalogs', ids);
}

export function listCatalogs(db: Db, orgId?: string): Promise<Catalog[]> {
  let query = db.selectFrom('catalogs').selectAll();
  if (orgId !== undefined) query = query.where('org_id', '=', orgId);
  return query.orderBy('name').execute();
}

export async function createProviderUser(
  db: Db,
  input: { orgId: string; username: string; email: string; passwordHash: string; role?: ProviderRole },
): Promise<ProviderUser> {
  const user: ProviderUser = {
    id: newId(),
    org_id: input.orgId,
    username: input.username,
    email: input.email,
    password_hash: input.passwordHash,
    created_at: now(),
    role: input.role ?? 'developer',
  };
  await db.insertInto('provider_users').values(user).execute();
  return user;
}

export function findProviderUser(db: Db, username: string): Promise<ProviderUser | undefined> {
  return db.selectFrom('provider_users').selectAll().where('username', '=', username).executeTakeFirst();
}

export function findProviderUserById(db: Db, id: string): Promise<ProviderUser | undefined> {
  return db.selectFrom('provider_users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listProviderUsers(db: Db, orgId: string): Promise<ProviderUser[]> {
  return db.selectFrom('provider_users').selectAll().where('org_id', '=', orgId).orderBy('username').execute();
}
