/**
 * What a consumer organization holds, counted under a lock: its apps, an app's credential pairs.
 * Every one is a client id in each gateway node's snapshot, so a developer who signs up must not
 * be able to add them without bound (services/consumer/apps.ts checks the settings).
 */
import { sql } from 'kysely';
import type { Db } from './store.ts';
import type { DialectName } from './migrations/index.ts';

/**
 * Holds the consumer organization's row until the transaction ends, so two app creations in it
 * count one after the other (PostgreSQL; SQLite's transactions hold the write lock from their start).
 */
export async function lockConsumerOrg(db: Db, dialect: DialectName, consumerOrgId: string): Promise<void> {
  if (dialect === 'postgres')
    await sql`select id from consumer_orgs where id = ${consumerOrgId} for update`.execute(db);
}

/** Holds the app's row until the transaction ends (PostgreSQL), as {@link lockConsumerOrg}. */
export async function lockApp(db: Db, dialect: DialectName, appId: string): Promise<void> {
  if (dialect === 'postgres') await sql`select id from apps where id = ${appId} for update`.execute(db);
}

export async function countApps(db: Db, consumerOrgId: string): Promise<number> {
  const row = await db
    .selectFrom('apps')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('consumer_org_id', '=', consumerOrgId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function countCredentials(db: Db, appId: string): Promise<number> {
  const row = await db
    .selectFrom('app_credentials')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
