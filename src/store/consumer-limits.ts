/**
 * What a consumer organization holds, counted under a lock: its apps, an app's credential pairs.
 * Every one is a client id in each gateway node's snapshot, so a developer who signs up must not
 * be able to add them without bound (services/consumer/apps.ts checks the settings).
 */
import { lockRows } from './row-locks.ts';
import type { Db } from './store.ts';
import type { DialectName } from './migrations/index.ts';

/** Holds the consumer organization's row until the transaction ends: two app creations in it count one after the other. */
export function lockConsumerOrg(db: Db, dialect: DialectName, consumerOrgId: string): Promise<void> {
  return lockRows(db, dialect, 'consumer_orgs', [consumerOrgId]);
}

/** Holds the app's row until the transaction ends, as {@link lockConsumerOrg}. */
export function lockApp(db: Db, dialect: DialectName, appId: string): Promise<void> {
  return lockRows(db, dialect, 'apps', [appId]);
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
