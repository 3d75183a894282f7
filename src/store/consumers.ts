/**
 * The consumer side of a catalog: consumer organizations, their portal users (a registry
 * separate from provider users), applications with credential pairs, and subscriptions.
 */
import type { Db } from './store.ts';
import type { App, AppCredential, ConsumerOrg, PortalUser, Subscription, SubscriptionState } from './schema.ts';
import { hashToken, newClientId, newId, newToken, now } from './secrets.ts';

export async function createConsumerOrg(
  db: Db,
  input: { catalogId: string; name: string; title: string; ownerId?: string; providerCreated?: boolean },
): Promise<ConsumerOrg> {
  const org: ConsumerOrg = {
    id: newId(),
    catalog_id: input.catalogId,
    name: input.name,
    title: input.title,
    owner_id: input.ownerId ?? null,
    provider_created: input.providerCreated === true ? 1 : 0,
    created_at: now(),
  };
  await db.insertInto('consumer_orgs').values(org).execute();
  return org;
}

export function findConsumerOrgById(db: Db, id: string): Promise<ConsumerOrg | undefined> {
  return db.selectFrom('consumer_orgs').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findConsumerOrgByName(db: Db, catalogId: string, name: string): Promise<ConsumerOrg | undefined> {
  return db
    .selectFrom('consumer_orgs')
    .selectAll()
    .where('catalog_id', '=', catalogId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function listConsumerOrgs(db: Db, catalogId: string): Promise<ConsumerOrg[]> {
  return db.selectFrom('consumer_orgs').selectAll().where('catalog_id', '=', catalogId).orderBy('name').execute();
}

export async function createPortalUser(
  db: Db,
  input: {
    catalogId: string;
    consumerOrgId: string;
    email: string;
    name: string;
    passwordHash: string;
    /** Created with a verified address (the provider or the demo vouches for it). */
    verified?: boolean;
  },
): Promise<PortalUser> {
  const user: PortalUser = {
    id: newId(),
    catalog_id: input.catalogId,
    consumer_org_id: input.consumerOrgId,
    email: input.email.toLowerCase(),
    name: input.name,
    password_hash: input.passwordHash,
    created_at: now(),
    email_verified_at: input.verified ? now() : null,
  };
  await db.insertInto('portal_users').values(user).execute();
  return user;
}

export function findPortalUserByEmail(db: Db, catalogId: string, email: string): Promise<PortalUser | undefined> {
  return db
    .selectFrom('portal_users')
    .selectAll()
    .where('catalog_id', '=', catalogId)
    .where('email', '=', email.toLowerCase())
    .executeTakeFirst();
}

export function findPortalUserById(db: Db, id: string): Promise<PortalUser | undefined> {
  return db.selectFrom('portal_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets the password and cancels the user's reset links: a link mailed before no longer resets it. */
export async function setPortalUserPassword(db: Db, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('portal_users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
  await db.deleteFrom('account_tokens').where('user_id', '=', id).where('purpose', '=', 'reset-password').execute();
}

export async function createApp(
  db: Db,
  input: { consumerOrgId: string; title: string; description: string },
): Promise<App> {
  const app: App = {
    id: newId(),
    consumer_org_id: input.consumerOrgId,
    title: input.title,
    description: input.description,
    created_at: now(),
    redirect_uris: '[]',
  };
  await db.insertInto('apps').values(app).execute();
  return app;
}

/** The app, only when it belongs to `consumerOrgId` (no cross-organization access). */
export function findApp(db: Db, consumerOrgId: string, appId: string): Promise<App | undefined> {
  return db
    .selectFrom('apps')
    .selectAll()
    .where('id', '=', appId)
    .where('consumer_org_id', '=', consumerOrgId)
    .executeTakeFirst();
}

export function findAppById(db: Db, appId: string): Promise<App | undefined> {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}

export function listApps(db: Db, consumerOrgId: string): Promise<App[]> {
  return db.selectFrom('apps').selectAll().where('consumer_org_id', '=', consumerOrgId).orderBy('created_at').execute();
}

export function listAppsInCatalog(db: Db, catalogId: string) {
  return db
    .selectFrom('apps')
    .innerJoin('consumer_orgs', 'consumer_orgs.id', 'apps.consumer_org_id')
    .select([
      'apps.id',
      'apps.title',
      'apps.description',
      'apps.created_at',
      'consumer_orgs.name as consumer_org_name',
      'consumer_orgs.id as consumer_org_id',
    ])
    .where('consumer_orgs.catalog_id', '=', catalogId)
    .orderBy('apps.created_at')
    .execute();
}

export async function updateApp(db: Db, appId: string, input: { title?: string; description?: string }): Promise<void> {
  await db.updateTable('apps').set(input).where('id', '=', appId).execute();
}

/** Replaces the app's registered OAuth redirect URIs. */
export async function setRedirectUris(db: Db, appId: string, uris: readonly string[]): Promise<void> {
  await db
    .updateTable('apps')
    .set({ redirect_uris: JSON.stringify(uris) })
    .where('id', '=', appId)
    .execute();
}

/** What a deletion took away that a gateway holds: the apps, and the products they were subscribed to. */
export interface Deleted {
  appIds: string[];
  productIds: string[];
}

/** The distinct products the app, or the consumer org's apps, are subscribed to, in any state. */
async function productsOf(db: Db, owner: { appId: string } | { consumerOrgId: string }): Promise<string[]> {
  const apps =
    'appId' in owner
      ? [owner.appId]
      : db.selectFrom('apps').select('id').where('consumer_org_id', '=', owner.consumerOrgId);
  const rows = await db
    .selectFrom('subscriptions')
    .select('product_id')
    .distinct()
    .where('app_id', 'in', apps)
    .execute();
  return rows.map((row) => row.product_id);
}

/** Deletes the app with its credentials and subscriptions (call inside a transaction). */
export async function deleteApp(db: Db, appId: string): Promise<Deleted> {
  const deleted = { appIds: [appId], productIds: await productsOf(db, { appId }) };
  await db.deleteFrom('subscriptions').where('app_id', '=', appId).execute();
  await db.deleteFrom('app_credentials').where('app_id', '=', appId).execute();
  await db.deleteFrom('apps').where('id', '=', appId).execute();
  return deleted;
}

export interface IssuedCredential {
  credential: AppCredential;
  /** Shown once; only its hash is stored. */
  clientSecret: string;
}

export async function addCredential(db: Db, appId: string, description = ''): Promise<IssuedCredential> {
  const clientSecret = newToken();
  const credential: AppCredential = {
    id: newId(),
    app_id: appId,
    client_id: newClientId(),
    secret_hash: hashToken(clientSecret),
    description,
    created_at: now(),
  };
  await db.insertInto('app_credentials').values(credential).execute();
  return { credential, clientSecret };
}

/** Replaces the secret of a credential; the client id stays. */
export async function resetCredentialSecret(db: Db, credentialId: string): Promise<string> {
  const clientSecret = newToken();
  await db
    .updateTable('app_credentials')
    .set({ secret_hash: hashToken(clientSecret) })
    .where('id', '=', credentialId)
    .execute();
  return clientSecret;
}

export function listCredentials(db: Db, appId: string): Promise<AppCredential[]> {
  return db.selectFrom('app_credentials').selectAll().where('app_id', '=', appId).orderBy('created_at').execute();
}

export async function deleteCredential(db: Db, credentialId: string): Promise<void> {
  await db.deleteFrom('app_credentials').where('id', '=', credentialId).execute();
}

export async function createSubscription(
  db: Db,
  input: { appId: string; productId: string; planId: string; state: SubscriptionState },
): Promise<Subscription> {
  const stamp = now();
  const subscription: Subscription = {
    id: newId(),
    app_id: input.appId,
    product_id: input.productId,
    plan_id: input.planId,
    state: input.state,
    created_at: stamp,
    updated_at: stamp,
  };
  await db.insertInto('subscriptions').values(subscription).execute();
  return subscription;
}

export function findSubscriptionById(db: Db, id: string): Promise<Subscription | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function setSubscriptionState(db: Db, id: string, state: SubscriptionState): Promise<void> {
  await db.updateTable('subscriptions').set({ state, updated_at: now() }).where('id', '=', id).execute();
}

/**
 * Moves a subscription from `pending` to `state` in one conditional update: false when it is no
 * longer pending (a retire or a revoke cancelled it meanwhile; PostgreSQL re-reads the row once
 * the other transaction commits), so a decision never revives what was cancelled.
 */
export async function decidePendingSubscription(db: Db, id: string, state: SubscriptionState): Promise<boolean> {
  const updated = await db
    .updateTable('subscriptions')
    .set({ state, updated_at: now() })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Subscriptions with product and plan names: one, those of an app, or of a whole catalog. */
export function listSubscriptionDetails(
  db: Db,
  filter: { id?: string; appId?: string; catalogId?: string; state?: SubscriptionState },
) {
  let query = db
    .selectFrom('subscriptions')
    .innerJoin('products', 'products.id', 'subscriptions.product_id')
    .innerJoin('plans', 'plans.id', 'subscriptions.plan_id')
    .innerJoin('apps', 'apps.id', 'subscriptions.app_id')
    .innerJoin('consumer_orgs', 'consumer_orgs.id', 'apps.consumer_org_id')
    .select([
      'subscriptions.id',
      'subscriptions.state',
      'subscriptions.created_at',
      'subscriptions.updated_at',
      'subscriptions.app_id',
      'apps.title as app_title',
      'consumer_orgs.id as consumer_org_id',
      'consumer_orgs.name as consumer_org_name',
      'consumer_orgs.title as consumer_org_title',
      'products.id as product_id',
      'products.name as product_name',
      'products.version as product_version',
      'products.title as product_title',
      'plans.id as plan_id',
      'plans.name as plan_name',
      'plans.title as plan_title',
    ]);
  if (filter.id !== undefined) query = query.where('subscriptions.id', '=', filter.id);
  if (filter.appId !== undefined) query = query.where('subscriptions.app_id', '=', filter.appId);
  if (filter.catalogId !== undefined) query = query.where('products.catalog_id', '=', filter.catalogId);
  if (filter.state !== undefined) query = query.where('subscriptions.state', '=', filter.state);
  return query.orderBy('subscriptions.created_at').execute();
}

/** A consumer organization and its owner, the first portal user; call inside a transaction. */
export async function createConsumerOrgWithOwner(
  trx: Db,
  catalogId: string,
  org: { name: string; title: string; providerCreated?: boolean },
  owner: { email: string; name: string; passwordHash: string; verified?: boolean },
) {
  const created = await createConsumerOrg(trx, { catalogId, ...org });
  const user = await createPortalUser(trx, { catalogId, consumerOrgId: created.id, ...owner });
  await trx.updateTable('consumer_orgs').set({ owner_id: user.id }).where('id', '=', created.id).execute();
  return { user, org: { ...created, owner_id: user.id } };
}

/** Cancels the live (active or pending) subscriptions to a product, as retiring it does. */
export async function cancelProductSubscriptions(db: Db, productId: string): Promise<void> {
  await db
    .updateTable('subscriptions')
    .set({ state: 'cancelled', updated_at: now() })
    .where('product_id', '=', productId)
    .where('state', 'in', ['active', 'pending'])
    .execute();
}

/**
 * Deletes a consumer organization with everything it owns: subscriptions, credentials, apps,
 * the sign-in sessions of its portal users and the users themselves (call inside a transaction).
 */
export async function deleteConsumerOrg(trx: Db, consumerOrgId: string): Promise<Deleted> {
  const apps = trx.selectFrom('apps').select('id').where('consumer_org_id', '=', consumerOrgId);
  const appIds = (await apps.execute()).map((row) => row.id);
  const deleted = { appIds, productIds: await productsOf(trx, { consumerOrgId }) };
  await trx.deleteFrom('subscriptions').where('app_id', 'in', apps).execute();
  await trx.deleteFrom('app_credentials').where('app_id', 'in', apps).execute();
  await trx.deleteFrom('apps').where('consumer_org_id', '=', consumerOrgId).execute();
  const users = trx.selectFrom('portal_users').select('id').where('consumer_org_id', '=', consumerOrgId);
  // Explicitly, not by cascade: SQLite enforces foreign keys only when asked to.
  await trx.deleteFrom('account_tokens').where('user_id', 'in', users).execute();
  const sessionIds = trx
    .selectFrom('sessions')
    .select('id')
    .where('kind', 'in', ['portal'])
    .where('user_id', 'in', users);
  await trx.deleteFrom('session_values').where('session_id', 'in', sessionIds).execute();
  const portalSessions = trx.deleteFrom('sessions').where('kind', 'in', ['portal']);
  await portalSessions.where('user_id', 'in', users).execute();
  await trx.updateTable('consumer_orgs').set({ owner_id: null }).where('id', '=', consumerOrgId).execute();
  await trx.deleteFrom('portal_users').where('consumer_org_id', '=', consumerOrgId).execute();
  await trx.deleteFrom('consumer_orgs').where('id', '=', consumerOrgId).execute();
  return deleted;
}
