/**
 * The change counter: every change a gateway must see (publish, activation, approval, app or
 * credential change) bumps it, so a gateway compares counters to know whether to rebuild.
 */
import { sql } from 'kysely';
import { changeChannel } from './change-feed.ts';
import type { Db } from './store.ts';

/**
 * Every kind of change, grouped by what a gateway's reload must read again for it
 * (store/snapshot-data.ts): a new kind is classified here, or it does not type-check.
 * - `catalog`: touches neither apps, credentials nor subscriptions (an API's own change is found by
 *   its `updated_at`);
 * - `compileInput`: the same, but changes what every API of a catalog compiles against (a catalog's
 *   name, its user registries, OAuth providers and keys): every API document is read again;
 * - `product`: the subscriptions of the product changed (its plans, its state), found by stamp;
 * - `subscription`: the subscriptions of the product the change's `ref` names;
 * - `app`: the row and credentials of the app the change's `ref` names (gone, for `app-delete`);
 * - `beside`: nothing of its own: its transaction also records a change for each app and product
 *   it touched (a consumer org deleted: `app-delete` for each app, `subscription` for each product
 *   its apps were subscribed to; see {@link recordDeleted});
 * - `everything`: reads everything (none is recorded now; kept for rows of older nodes).
 *
 * A change of an `app` or `beside` kind without a `ref` (written before refs existed) reads everything.
 */
export const changeKinds = {
  catalog: ['api', 'api-delete', 'api-state', 'oauth-revocation'],
  compileInput: [
    'catalog',
    'user-registry',
    'user-registry-delete',
    'oauth-provider',
    'oauth-provider-delete',
    'oauth-key',
  ],
  product: ['product', 'product-state'],
  subscription: ['subscription', 'subscription-cancel', 'subscription-decision', 'subscription-revoke'],
  app: ['app', 'credential', 'credential-delete', 'secret-reset', 'app-delete'],
  beside: ['consumer-org-delete'],
  everything: [],
} as const;

export type ChangeKind = (typeof changeKinds)[keyof typeof changeKinds][number];

/**
 * Bumps the change counter; on PostgreSQL also notifies listeners when the transaction commits.
 * `ref` names what the change touched where a gateway can read only that again (the product of a
 * subscription change, the app of an app or credential change: see snapshot-data.ts).
 */
export async function recordChange(
  db: Db,
  kind: ChangeKind,
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

/**
 * Records, in the deletion's transaction, what it took away that gateways hold, so that they read
 * only that again: each app (`app-delete`, except `recorded`, the change's own ref) and the
 * subscriptions of each product the apps were subscribed to (`subscription`).
 */
export async function recordDeleted(
  db: Db,
  dialect: 'sqlite' | 'postgres',
  deleted: { appIds: readonly string[]; productIds: readonly string[] },
  recorded?: string,
): Promise<void> {
  for (const appId of deleted.appIds) if (appId !== recorded) await recordChange(db, 'app-delete', dialect, appId);
  for (const productId of deleted.productIds) await recordChange(db, 'subscription', dialect, productId);
}
