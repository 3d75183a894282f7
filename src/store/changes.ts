/**
 * The change counter: every change a gateway must see (publish, activation, approval, app or
 * credential change) bumps it, so a gateway compares counters to know whether to rebuild.
 */
import type { Db } from './store.ts';

export async function recordChange(db: Db, kind: string): Promise<void> {
  await db.insertInto('changes').values({ ts: Date.now(), kind }).execute();
}

export async function latestChange(db: Db): Promise<number> {
  const row = await db.selectFrom('changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  return Number(row?.id ?? 0);
}
