/**
 * Per-installation secret keys, shared by every node through the store. A key is created on first
 * use: each node inserts a random one only if the name is still free, then reads back what the
 * store holds, so nodes starting at the same moment end up with the same key.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from './store.ts';
import { now } from './secrets.ts';

/** The key stored under `name` (256 bits), created if there is none yet. */
export async function serverKey(db: Db, name: string): Promise<Buffer> {
  await db
    .insertInto('server_keys')
    .values({ name, key: randomBytes(32).toString('base64url'), created_at: now() })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('server_keys').select('key').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.key, 'base64url');
}
