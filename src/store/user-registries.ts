/** User registries of provider orgs and the catalogs that enable them (API Connect's "API user registries"). */
import type { Db } from './store.ts';
import type { UserRegistryRow } from './schema.ts';
import { newId, now } from './secrets.ts';

export interface NewUserRegistry {
  orgId: string;
  name: string;
  title: string;
  registryType: UserRegistryRow['registry_type'];
  configuration: Record<string, unknown>;
}

export async function insertUserRegistry(db: Db, input: NewUserRegistry): Promise<UserRegistryRow> {
  const at = now();
  const row: UserRegistryRow = {
    id: newId(),
    org_id: input.orgId,
    name: input.name,
    title: input.title,
    registry_type: input.registryType,
    configuration: JSON.stringify(input.configuration),
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('user_registries').values(row).execute();
  return row;
}

export async function updateUserRegistry(
  db: Db,
  id: string,
  input: { title: string; configuration: Record<string, unknown> },
): Promise<void> {
  const values = {
    title: input.title,
    configuration: JSON.stringify(input.configuration),
    updated_at: now(),
  };
  await db.updateTable('user_registries').set(values).where('id', '=', id).execute();
}

export async function deleteUserRegistry(db: Db, id: string): Promise<void> {
  await db.deleteFrom('catalog_user_registries').where('registry_id', '=', id).execute();
  await db.deleteFrom('user_registries').where('id', '=', id).execute();
}

export function findUserRegistry(db: Db, orgId: string, name: string): Promise<UserRegistryRow | undefined> {
  return db
    .selectFrom('user_registries')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function listUserRegistries(db: Db, orgId: string): Promise<UserRegistryRow[]> {
  return db.selectFrom('user_registries').selectAll().where('org_id', '=', orgId).orderBy('name').execute();
}

/** The registries a catalog enables for its APIs. */
export function listCatalogUserRegistries(db: Db, catalogId: string): Promise<UserRegistryRow[]> {
  return db
    .selectFrom('catalog_user_registries')
    .innerJoin('user_registries', 'user_registries.id', 'catalog_user_registries.registry_id')
    .selectAll('user_registries')
    .where('catalog_user_registries.catalog_id', '=', catalogId)
    .orderBy('user_registries.name')
    .execute();
}

export async function enableInCatalog(db: Db, catalogId: string, registryId: string): Promise<void> {
  const existing = await db
    .selectFrom('catalog_user_registries')
    .select('registry_id')
    .where('catalog_id', '=', catalogId)
    .where('registry_id', '=', registryId)
    .executeTakeFirst();
  if (!existing)
    await db.insertInto('catalog_user_registries').values({ catalog_id: catalogId, registry_id: registryId }).execute();
}

export async function disableInCatalog(db: Db, catalogId: string, registryId: string): Promise<void> {
  await db
    .deleteFrom('catalog_user_registries')
    .where('catalog_id', '=', catalogId)
    .where('registry_id', '=', registryId)
    .execute();
}

/** Every catalog's enabled registries, for the gateway's snapshot. */
export function loadCatalogRegistries(db: Db): Promise<Array<UserRegistryRow & { catalog_id: string }>> {
  return db
    .selectFrom('catalog_user_registries')
    .innerJoin('user_registries', 'user_registries.id', 'catalog_user_registries.registry_id')
    .selectAll('user_registries')
    .select('catalog_user_registries.catalog_id')
    .execute();
}
