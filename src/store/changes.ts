/**
 * The change counter: every change a gateway must see (publish, activation, approval, app or
 * credential change) bumps it, so a gateway compares counters to know whether to rebuild.
 */
import { sql } from 'kysely';
import { changeChannel } from './change-feed.ts';
import type { Db } from './store.ts';

/**
 * Bumps the change counter; on PostgreSQL also notifies listeners when the transaction commits.
 * `ref` names what the change touched where a gateway can read only that again (the product of a
 * subscription change, the app of an app or credential change: see snapshot-data.ts).
 */
export async function recordChange(
  db: Db,
  kind: string,
  dialect: 'sqlite' | 'postgres' = 'sqlite',
  ref: string | null = null,
): Promise<void> {
  await db.insertInto('changes').values({ ts: Date.now(), kind, ref }).execute();
  if (dialect === 'postgres') await sql`select pg_notify(${changeChannel}, ${kind})`.execute(db);
}

export async function latestChange(db: Db): Promise<number> {
  const row = await db
    .selectFrom('changes')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}
