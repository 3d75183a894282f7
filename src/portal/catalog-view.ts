/**
 * What the signed-in (or anonymous) visitor may see of the catalog: products by their view
 * visibility (`canSee`), deprecated products only to organizations already subscribed, and the
 * organization's own subscriptions.
 */
import { PorticoError } from '../errors.ts';
import { canSee } from '../management/services.ts';
import type { Services } from '../management/services.ts';
import * as consumers from '../store/consumers.ts';
import { findProduct, listProductApis } from '../store/products.ts';
import type { ProductRow } from '../store/schema.ts';
import type { PortalContext } from './context.ts';

export type SubscriptionDetail = Awaited<ReturnType<typeof consumers.listSubscriptionDetails>>[number];

/** The subscriptions of every app of the visitor's organization (none when anonymous). */
export async function orgSubscriptions(services: Services, context: PortalContext): Promise<SubscriptionDetail[]> {
  if (!context.org) return [];
  const all = await consumers.listSubscriptionDetails(services.store.db, { catalogId: context.catalog.catalogId });
  return all.filter((s) => s.consumer_org_id === context.org!.id);
}

function liveProductIds(subscriptions: SubscriptionDetail[]): Set<string> {
  return new Set(subscriptions.filter((s) => s.state === 'active' || s.state === 'pending').map((s) => s.product_id));
}

function visibleTo(product: ProductRow, context: PortalContext, subscribed: Set<string>): boolean {
  if (!canSee(product, context.org?.name)) return false;
  return product.state !== 'deprecated' || subscribed.has(product.id);
}

/** The products the visitor may see, by title. */
export async function visibleProducts(services: Services, context: PortalContext): Promise<ProductRow[]> {
  const products = await services.listProducts(context.catalog.orgId, context.catalog.catalogName, ['published', 'deprecated']);
  const subscribed = liveProductIds(await orgSubscriptions(services, context));
  return products.filter((p) => visibleTo(p, context, subscribed)).sort((a, b) => a.title.localeCompare(b.title) || a.version.localeCompare(b.version));
}

/** One product the visitor may see; a product it may not see is "not found", like a missing one. */
export async function visibleProduct(services: Services, context: PortalContext, name: string, version: string): Promise<ProductRow> {
  const product = await findProduct(services.store.db, context.catalog.catalogId, name, version);
  const subscribed = liveProductIds(await orgSubscriptions(services, context));
  if (!product || !visibleTo(product, context, subscribed)) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'product', id: `${name}:${version}` });
  return product;
}

/** An API of a product the visitor may see, with its stored row. */
export async function visibleProductApi(services: Services, context: PortalContext, product: ProductRow, apiName: string, apiVersion: string) {
  const link = (await listProductApis(services.store.db, product.id)).find((a) => a.name === apiName && a.version === apiVersion);
  if (!link) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'API', id: `${apiName}:${apiVersion}` });
  return services.api(context.catalog.orgId, apiName, apiVersion);
}

/** The product document's `info` texts. */
export function productInfo(product: ProductRow): { summary: string; description: string } {
  const document = JSON.parse(product.document) as { info?: { summary?: unknown; description?: unknown } };
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { summary: text(document.info?.summary), description: text(document.info?.description) };
}
