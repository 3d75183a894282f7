/**
 * What a provider scripts on behalf of a consumer organization (as API Connect's platform API
 * and `apic` do): look up and delete the organization, create and delete its apps, and
 * subscribe an app to a product's plan. The consumer rules apply unchanged: a plan needing
 * approval gives a pending subscription the provider then approves.
 */
import { PorticoError } from '../../errors.ts';
import { recordDeleted } from '../../store/changes.ts';
import * as consumers from '../../store/consumers.ts';
import type { Db } from '../../store/store.ts';
import * as products from '../../store/products.ts';
import type { ConsumerOrg, Subscription } from '../../store/schema.ts';
import * as apps from '../consumer/apps.ts';
import { canSee, maySubscribe, subscribe } from '../consumer/subscriptions.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { catalog } from './organizations.ts';

/** A consumer organization as a provider names it: its own org, the catalog, the organization's name. */
export interface ConsumerOrgRef {
  orgId: string;
  catalog: string;
  name: string;
}

/** What a provider subscribes an app to: a product of the catalog by name and version, and a plan. */
export interface ProviderSubscription {
  product: string;
  version: string;
  plan: string;
}

/** The consumer organization of the catalog, or MGMT_NOT_FOUND. */
export async function consumerOrg(context: ServiceContext, ref: ConsumerOrgRef): Promise<ConsumerOrg> {
  const target = await catalog(context, ref.orgId, ref.catalog);
  const found = await consumers.findConsumerOrgByName(context.store.db, target.id, ref.name);
  if (!found) throw notFound('consumer organization', ref.name);
  return found;
}

/** Deletes the organization, its users, apps, credentials and subscriptions; the gateways forget them. */
export async function deleteConsumerOrg(context: ServiceContext, ref: ConsumerOrgRef): Promise<void> {
  const found = await consumerOrg(context, ref);
  const deleteOrg = async (trx: Db) =>
    recordDeleted(trx, context.store.dialect, await consumers.deleteConsumerOrg(trx, found.id));
  await change(context, 'consumer-org-delete', deleteOrg, found.id);
}

export async function createApp(context: ServiceContext, ref: ConsumerOrgRef, input: apps.NewApp) {
  const owner = await consumerOrg(context, ref);
  const created = await apps.createApp(context, owner.id, input);
  return { ...created, org: owner };
}

/** The organization's app with its credentials (client ids only: secrets are stored hashed). */
export async function app(context: ServiceContext, ref: ConsumerOrgRef, appId: string) {
  const owner = await consumerOrg(context, ref);
  const found = await apps.app(context, owner.id, appId);
  const credentials = await consumers.listCredentials(context.store.db, found.id);
  const subscriptions = await consumers.listSubscriptionDetails(context.store.db, { appId: found.id });
  return { app: found, org: owner, credentials, subscriptions };
}

export async function deleteApp(context: ServiceContext, ref: ConsumerOrgRef, appId: string): Promise<void> {
  const owner = await consumerOrg(context, ref);
  await apps.deleteApp(context, owner.id, appId);
}

/**
 * Subscribes the organization's app to a plan. The provider is told why a product cannot be
 * subscribed to (state, visibility) where a consumer is only told it does not exist.
 */
export async function subscribeApp(
  context: ServiceContext,
  ref: ConsumerOrgRef,
  appId: string,
  input: ProviderSubscription,
): Promise<Subscription> {
  const owner = await consumerOrg(context, ref);
  const product = await products.findProduct(context.store.db, owner.catalog_id, input.product, input.version);
  const name = `${input.product}:${input.version}`;
  if (!product) {
    const reason = `catalog ${ref.catalog} has no product ${name}`;
    throw new PorticoError('MGMT_VALIDATION', { field: 'product', reason });
  }
  if (product.state !== 'published') {
    const reason = `product ${name} is ${product.state} and takes no new subscriptions`;
    throw new PorticoError('MGMT_CONFLICT', { field: 'product', reason });
  }
  if (!canSee(product, owner) || !maySubscribe(product, owner)) {
    const custom = product.view_type === 'custom' || product.subscribe_type === 'custom';
    const why =
      custom && owner.provider_created !== 1
        ? ' (it registered itself on the portal: custom visibility names only organizations a provider created)'
        : '';
    const reason = `product ${name}'s visibility does not let consumer organization ${owner.name} subscribe${why}`;
    throw new PorticoError('MGMT_VALIDATION', { field: 'product', reason });
  }
  return subscribe(context, owner.id, { appId, productId: product.id, planName: input.plan });
}

/** A subscription of the catalog with its app, organization, product and plan. */
export async function subscriptionDetail(context: ServiceContext, orgId: string, catalogName: string, id: string) {
  const target = await catalog(context, orgId, catalogName);
  const [found] = await consumers.listSubscriptionDetails(context.store.db, { id, catalogId: target.id });
  if (!found) throw notFound('subscription', id);
  return found;
}
