/**
 * What a visitor of the portal may see of the catalog: products by their view visibility
 * (`canSee`), deprecated products only to organizations already subscribed, and the
 * organization's own subscriptions.
 */
import { PorticoError } from '../../errors.ts';
import { findApi } from '../../store/apis.ts';
import * as consumers from '../../store/consumers.ts';
import * as products from '../../store/products.ts';
import type { ApiRow, ConsumerOrg, PortalUser, ProductRow } from '../../store/schema.ts';
import type { ServiceContext } from '../service-context.ts';
import { canSee } from './subscriptions.ts';

/**
 * The catalog a portal serves and, when signed in, the visitor's consumer organization and
 * user. Only a user whose address is verified sees beyond public products (issue 16): an
 * unverified address could be anyone's.
 */
export interface Visitor {
  catalog: { orgId: string; catalogId: string };
  org?: ConsumerOrg;
  user?: Pick<PortalUser, 'email_verified_at'>;
}

/** The organization products' visibility is checked against: none until the address is verified. */
function verifiedOrg(visitor: Visitor): ConsumerOrg | undefined {
  return visitor.user?.email_verified_at ? visitor.org : undefined;
}

export type SubscriptionDetail = Awaited<ReturnType<typeof consumers.listSubscriptionDetails>>[number];

/** The subscriptions of every app of the visitor's organization (none when anonymous). */
export async function orgSubscriptions(context: ServiceContext, visitor: Visitor): Promise<SubscriptionDetail[]> {
  if (!visitor.org) return [];
  const all = await consumers.listSubscriptionDetails(context.store.db, {
    catalogId: visitor.catalog.catalogId,
  });
  return all.filter((s) => s.consumer_org_id === visitor.org!.id);
}

function liveProductIds(subscriptions: SubscriptionDetail[]): Set<string> {
  const live = subscriptions.filter((s) => s.state === 'active' || s.state === 'pending');
  return new Set(live.map((s) => s.product_id));
}

function visibleTo(product: ProductRow, visitor: Visitor, subscribed: Set<string>): boolean {
  if (!canSee(product, verifiedOrg(visitor))) return false;
  return product.state !== 'deprecated' || subscribed.has(product.id);
}

/** The products the visitor may see, by title. */
export async function visibleProducts(context: ServiceContext, visitor: Visitor): Promise<ProductRow[]> {
  const all = await products.listProducts(context.store.db, visitor.catalog.catalogId, ['published', 'deprecated']);
  const subscribed = liveProductIds(await orgSubscriptions(context, visitor));
  const byTitle = (a: ProductRow, b: ProductRow) =>
    a.title.localeCompare(b.title) || a.version.localeCompare(b.version);
  return all.filter((p) => visibleTo(p, visitor, subscribed)).sort(byTitle);
}

/** One product the visitor may see; a product it may not see is "not found", like a missing one. */
export async function visibleProduct(
  context: ServiceContext,
  visitor: Visitor,
  name: string,
  version: string,
): Promise<ProductRow> {
  const product = await products.findProduct(context.store.db, visitor.catalog.catalogId, name, version);
  const subscribed = liveProductIds(await orgSubscriptions(context, visitor));
  if (!product || !visibleTo(product, visitor, subscribed)) {
    throw new PorticoError('MGMT_NOT_FOUND', { kind: 'product', id: `${name}:${version}` });
  }
  return product;
}

/** An API of a product the visitor may see, with its stored row. */
export async function visibleProductApi(
  context: ServiceContext,
  visitor: Visitor,
  product: ProductRow,
  apiName: string,
  apiVersion: string,
): Promise<ApiRow> {
  const links = await products.listProductApis(context.store.db, product.id);
  const api = links.some((a) => a.name === apiName && a.version === apiVersion)
    ? await findApi(context.store.db, visitor.catalog.orgId, apiName, apiVersion)
    : undefined;
  if (!api) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'API', id: `${apiName}:${apiVersion}` });
  return api;
}
