/** What a consumer organization may see and subscribe to, and its subscriptions. */
import { PorticoError } from '../../errors.ts';
import * as consumers from '../../store/consumers.ts';
import * as products from '../../store/products.ts';
import type { ConsumerOrg, PortalUser, ProductRow, Subscription } from '../../store/schema.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { app } from './apps.ts';

/** A consumer organization as product visibility reads it. */
export type Viewer = Pick<ConsumerOrg, 'name' | 'provider_created'>;

/**
 * Whether a custom visibility list (JSON) names the organization. Only an organization a
 * provider created matches: a visitor can register any free name on the portal, also one a
 * product will list later, and must not receive what was meant for one partner (docs/portal.md).
 */
function listedIn(orgs: string, org: Viewer): boolean {
  return org.provider_created === 1 && (JSON.parse(orgs) as string[]).includes(org.name);
}

/**
 * Whether a consumer org (or an anonymous visitor, `undefined`) may see a product: public to
 * all, authenticated to any signed-in org, custom to listed orgs a provider created; deprecated
 * products only to existing subscribers (checked by the caller), retired and archived to nobody.
 */
export function canSee(product: ProductRow, org: Viewer | undefined): boolean {
  if (product.state !== 'published' && product.state !== 'deprecated') return false;
  if (product.view_type === 'public') return true;
  if (org === undefined) return false;
  if (product.view_type === 'authenticated') return true;
  return listedIn(product.view_orgs, org);
}

/** Whether an organization that can see a product may subscribe to it (its subscribe visibility). */
export function maySubscribe(product: ProductRow, org: Viewer): boolean {
  return product.subscribe_type !== 'custom' || listedIn(product.subscribe_orgs, org);
}

export interface NewSubscription {
  appId: string;
  productId: string;
  planName: string;
}

/**
 * Subscribes an app to a plan of a published product. Plans needing approval start
 * `pending`; others are `active` at once. One live subscription per app and product.
 */
export async function subscribe(
  context: ServiceContext,
  consumerOrgId: string,
  input: NewSubscription,
): Promise<Subscription> {
  const db = context.store.db;
  const subscriber = await app(context, consumerOrgId, input.appId);
  const product = await products.findProductById(db, input.productId);
  const org = await consumers.findConsumerOrgById(db, consumerOrgId);
  if (!product || !org || product.catalog_id !== org.catalog_id || !canSee(product, org)) {
    throw notFound('product', input.productId);
  }
  if (product.state !== 'published') {
    const reason = `product ${product.name}:${product.version} is ${product.state} and takes no new subscriptions`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  if (!maySubscribe(product, org)) {
    throw new PorticoError('MGMT_FORBIDDEN', {
      reason: 'your organization may not subscribe to this product',
    });
  }
  const plan = (await products.listPlans(db, product.id)).find((p) => p.name === input.planName);
  if (!plan) {
    throw new PorticoError('MGMT_VALIDATION', {
      field: 'plan',
      reason: `product ${product.name} has no plan ${input.planName}`,
    });
  }
  const live = (await consumers.listSubscriptionDetails(db, { appId: subscriber.id })).find(
    (s) => s.product_id === product.id && (s.state === 'active' || s.state === 'pending'),
  );
  if (live) {
    const reason = `app ${subscriber.title} is already subscribed to ${product.title} (${live.plan_title}, ${live.state})`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  const row = {
    appId: subscriber.id,
    productId: product.id,
    planId: plan.id,
    state: plan.approval ? 'pending' : 'active',
  } as const;
  return change(context, 'subscription', (trx) => consumers.createSubscription(trx, row), product.id);
}

/** What the portal calls: `subscribe` for the user's organization, once the user's address is verified. */
export function subscribeAs(context: ServiceContext, user: PortalUser, input: NewSubscription): Promise<Subscription> {
  if (!user.email_verified_at) {
    throw new PorticoError('MGMT_EMAIL_UNVERIFIED', {
      reason: 'open the link we emailed you, then subscribe',
    });
  }
  return subscribe(context, user.consumer_org_id, input);
}

/** Cancels a subscription of one of the consumer org's apps. */
export async function cancelSubscription(
  context: ServiceContext,
  consumerOrgId: string,
  subscriptionId: string,
): Promise<void> {
  const subscription = await consumers.findSubscriptionById(context.store.db, subscriptionId);
  if (!subscription || !(await consumers.findApp(context.store.db, consumerOrgId, subscription.app_id))) {
    throw notFound('subscription', subscriptionId);
  }
  await change(
    context,
    'subscription-cancel',
    (trx) => consumers.setSubscriptionState(trx, subscriptionId, 'cancelled'),
    subscription.product_id,
  );
}
