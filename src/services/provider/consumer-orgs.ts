/** What a provider does on the consumer side of a catalog: create consumer orgs, approve and revoke subscriptions. */
import { PorticoError } from '../../errors.ts';
import * as consumers from '../../store/consumers.ts';
import { findProductById } from '../../store/products.ts';
import type { Subscription } from '../../store/schema.ts';
import { hashPassword } from '../../store/secrets.ts';
import { checkEmail, checkPasswordRules } from '../account-rules.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { catalog } from './organizations.ts';

/** A consumer organization a provider creates, with the portal user who owns it. */
export interface NewConsumerOrg {
  name: string;
  title?: string;
  owner: { email: string; password: string; name?: string };
}

/**
 * Creates a consumer organization with the exact `name` a provider chose (the one its
 * products' custom visibility lists) and its owner, a portal user who signs in with
 * `owner.email`. This is how a partner gets the organization a product is meant for.
 */
export async function createConsumerOrg(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  input: NewConsumerOrg,
) {
  const db = context.store.db;
  const target = await catalog(context, orgId, catalogName);
  if (typeof input.name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(input.name)) {
    const reason = 'must be lower-case letters, digits and dashes, starting with a letter or digit';
    throw new PorticoError('MGMT_VALIDATION', { field: 'name', reason });
  }
  const email = checkEmail(input.owner?.email, 'owner.email');
  checkPasswordRules(input.owner.password, 'owner.password');
  if (await consumers.findConsumerOrgByName(db, target.id, input.name)) {
    const reason = `consumer organization ${input.name} already exists in catalog ${catalogName}`;
    throw new PorticoError('MGMT_CONFLICT', { field: 'name', reason });
  }
  if (await consumers.findPortalUserByEmail(db, target.id, email)) {
    const reason = `a portal user with this email already exists in catalog ${catalogName}`;
    throw new PorticoError('MGMT_CONFLICT', { field: 'owner.email', reason });
  }
  const passwordHash = await hashPassword(input.owner.password);
  // The provider vouches for the address it enters: the owner needs no emailed link.
  const owner = {
    email,
    name: (input.owner.name ?? '').trim() || email.split('@')[0],
    passwordHash,
    verified: true,
  };
  const org = { name: input.name, title: (input.title ?? '').trim() || input.name, providerCreated: true };
  return context.store.transaction((trx) => consumers.createConsumerOrgWithOwner(trx, target.id, org, owner));
}

/** A subscription of the catalog, or MGMT_NOT_FOUND when it is another catalog's. */
async function catalogSubscription(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  subscriptionId: string,
): Promise<Subscription> {
  const target = await catalog(context, orgId, catalogName);
  const subscription = await consumers.findSubscriptionById(context.store.db, subscriptionId);
  const product = subscription ? await findProductById(context.store.db, subscription.product_id) : undefined;
  if (!subscription || !product || product.catalog_id !== target.id) throw notFound('subscription', subscriptionId);
  return subscription;
}

/** Approves or rejects a pending subscription (the provider's task list). */
export async function decideSubscription(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  subscriptionId: string,
  decision: 'approve' | 'reject',
): Promise<Subscription> {
  const subscription = await catalogSubscription(context, orgId, catalogName, subscriptionId);
  if (subscription.state !== 'pending') {
    throw new PorticoError('MGMT_CONFLICT', {
      reason: `subscription ${subscriptionId} is ${subscription.state}, not pending`,
    });
  }
  const state = decision === 'approve' ? 'active' : 'rejected';
  await change(
    context,
    'subscription-decision',
    async (trx) => {
      if (await consumers.decidePendingSubscription(trx, subscription.id, state)) return;
      const now = await consumers.findSubscriptionById(trx, subscription.id);
      throw new PorticoError('MGMT_CONFLICT', {
        reason: `subscription ${subscriptionId} is ${now?.state ?? 'gone'}, not pending`,
      });
    },
    subscription.product_id,
  );
  return { ...subscription, state };
}

/** Revokes (cancels) any subscription of the catalog, as the provider. */
export async function revokeSubscription(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  subscriptionId: string,
): Promise<void> {
  const subscription = await catalogSubscription(context, orgId, catalogName, subscriptionId);
  await change(
    context,
    'subscription-revoke',
    (trx) => consumers.setSubscriptionState(trx, subscriptionId, 'cancelled'),
    subscription.product_id,
  );
}
