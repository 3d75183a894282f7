/**
 * The change counter: every change a gateway must see (publish, activation, approval, app or
 * credential change) bumps it, so a gateway compares counters to know whether to rebuild.
 */
import { sql } from 'kysely';
import { changeChannel } from './change-feed.ts';
import type { Db } from './store.ts';

/** Bumps the change counter; on PostgreSQL also notifies listeners when the transaction commits. */
export async function recordChange(db: Db, kind: string, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<void> {
  await db.insertInto('changes').values({ ts: Date.now(), kind }).execute();
  if (dialect === 'postgres') await sql`select pg_notify(${changeChannel}, ${kind})`.execute(db);
}

export async function latestChange(db: Db): Promise<number> {
  const row = await db
    .selectFrom('changes')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}
