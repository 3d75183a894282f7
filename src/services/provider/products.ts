/** Products in a catalog: create or update from YAML, and API Connect's product lifecycle. */
import { parseProductDocument, securityProblems } from '../../definitions/index.ts';
import { catalogNamesCheck } from './catalog-names.ts';
import type { ProductDefinition } from '../../definitions/types.ts';
import { DefinitionError, PorticoError } from '../../errors.ts';
import * as apisRepo from '../../store/apis.ts';
import { cancelProductSubscriptions } from '../../store/consumers.ts';
import * as orgs from '../../store/orgs.ts';
import * as products from '../../store/products.ts';
import type { ApiRow, ProductRow, ProductState } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { catalog } from './organizations.ts';
import { checkProductPlanLimits } from './plan-limit-check.ts';
import type { LoadedApi } from './plan-limit-check.ts';
import { resolveApis } from './product-apis.ts';
import type { ApiLink } from './product-apis.ts';

/** API Connect's product lifecycle: which state may follow which (IBM "The Product lifecycle"). */
const productTransitions: Record<ProductState, ProductState[]> = {
  staged: ['published', 'staged'],
  published: ['deprecated', 'retired', 'published'],
  deprecated: ['published', 'retired'],
  retired: ['archived', 'staged'],
  archived: [],
};

/** What a product may be moved to from its state. */
export function allowedProductTransitions(state: ProductState): ProductState[] {
  return productTransitions[state];
}

export interface PublishedProduct {
  product: ProductRow;
  definition: ProductDefinition;
  created: boolean;
  changed: boolean;
  /** The product's APIs this publish brought online, as `name:version`. */
  activated: string[];
}

export interface ProductInput {
  text: string;
  file: string;
  state?: ProductState;
  attachments?: Record<string, string>;
  /** Whether publishing brings the product's offline APIs online (default) or is refused. */
  activate?: boolean;
}

/**
 * Creates or updates a product in a catalog from its YAML, resolving the APIs it names.
 * `attachments` holds the API files a product names by `$ref`, by file name.
 */
export async function putProduct(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  input: ProductInput,
): Promise<PublishedProduct> {
  const definition = parseProductDocument(input.text, input.file);
  const target = await catalog(context, orgId, catalogName);
  const apiLinks = await resolveApis(context.store.db, orgId, definition, input.file, input.attachments);
  const checked = await checkPut(context.store.db, target.id, definition, input, apiLinks, false);
  if (checked.unchanged)
    return { product: checked.existing!, definition, created: false, changed: false, activated: [] };
  const { product, created, offline } = await change(context, 'product', async (trx) => {
    // A publish or a retire of this catalog may have committed since the checks above: they
    // run again under the catalog's lock, on what is stored now (a review found a retire
    // answered 200 and then undone by a concurrent publish, and two APIs on one base path).
    await orgs.lockCatalogs(trx, context.store.dialect, [target.id]);
    const stored = await checkPut(trx, target.id, definition, input, apiLinks, true);
    await bringOnline(trx, stored.offline);
    const row = productRow(target.id, definition, stored.state, apiLinks);
    return { ...(await products.upsertProduct(trx, row)), offline: stored.offline };
  });
  return { product, definition, created, changed: true, activated: offline.map(apiRef) };
}

/**
 * Whether the product document may be stored in the catalog as the store holds it through `db`.
 * Before the catalog's lock (`locked` false) only what decides a no-op and the cheap refusals
 * are checked, and the publish rules only when the answer is that no-op (no second run follows).
 */
async function checkPut(
  db: Db,
  catalogId: string,
  definition: ProductDefinition,
  input: ProductInput,
  apiLinks: ApiLink[],
  locked: boolean,
) {
  const existing = await products.findProduct(db, catalogId, definition.name, definition.version);
  const state = input.state ?? existing?.state ?? 'staged';
  const ref = `${definition.name}:${definition.version}`;
  if (existing && existing.state !== state && !productTransitions[existing.state].includes(state)) {
    throw new PorticoError('MGMT_CONFLICT', {
      reason: `product ${ref} is ${existing.state} and cannot become ${state}`,
    });
  }
  const apis = state === 'published' ? await loadApis(db, apiLinks) : undefined;
  const publish = () => checkPublishable(db, catalogId, apis!, existing?.id, input.file, definition.document);
  if (apis && locked) await publish();
  const offline = apis ? offlineApis(ref, apis, input.activate) : [];
  const sameApis = existing ? await sameApiLinks(db, existing.id, apiLinks) : false;
  const sameDocument = existing?.document === JSON.stringify(definition.document);
  const unchanged =
    existing !== undefined && sameDocument && existing.state === state && sameApis && offline.length === 0;
  if (apis && !locked && unchanged) await publish();
  return { existing, state, offline, unchanged };
}

/** The stored APIs of a product's links, in their order, read in one statement; a link to none left out. */
async function loadApis(db: Db, links: ApiLink[]): Promise<Array<ApiLink & { api: LoadedApi }>> {
  const rows = await apisRepo.findApisByIds(
    db,
    links.map((l) => l.apiId),
  );
  // One LoadedApi per row, so an API under several keys is parsed once.
  const loaded = new Map<string, LoadedApi>();
  for (const [id, row] of rows) {
    let document: Record<string, unknown> | undefined;
    loaded.set(id, { row, document: () => (document ??= JSON.parse(row.document) as Record<string, unknown>) });
  }
  return links.flatMap((link) => {
    const api = loaded.get(link.apiId);
    return api ? [{ ...link, api }] : [];
  });
}

/**
 * A product about to be published: its APIs' base paths are free in the catalog, their security
 * enforceable there, and its plans define the limits they name. Call under the catalog's lock
 * (or for a no-op answer).
 */
async function checkPublishable(
  db: Db,
  catalogId: string,
  links: Array<ApiLink & { api: LoadedApi }>,
  productId: string | undefined,
  file: string,
  productDocument: Record<string, unknown>,
) {
  await checkBasePaths(db, catalogId, [...new Set(links.map((l) => l.api.row))], productId);
  await checkSecurity(db, links, catalogId);
  checkProductPlanLimits(file, productDocument, links);
}

const apiRef = (api: { name: string; version: string }) => `${api.name}:${api.version}`;

/**
 * The product's APIs that are offline. Publishing a product puts its APIs online in API Connect
 * ("Publishing a Product"), so they are returned to be brought online; with `activate: false`
 * the publish is refused instead, naming them.
 */
function offlineApis(product: string, links: Array<{ api: LoadedApi }>, activate = true): ApiRow[] {
  const offline = links.map((l) => l.api.row).filter((api) => api.state === 'offline');
  if (offline.length > 0 && !activate) {
    const names = offline.map(apiRef).join(', ');
    const reason = `product ${product} uses offline APIs ${names}; bring them online first, or publish with activation`;
    throw new PorticoError('MGMT_CONFLICT', { field: 'activate', reason });
  }
  return offline;
}

async function bringOnline(trx: Db, apis: ApiRow[]): Promise<void> {
  for (const api of apis) await apisRepo.setApiState(trx, api.id, 'online');
}

function productRow(
  catalogId: string,
  definition: ProductDefinition,
  state: ProductState,
  apis: ApiLink[],
): products.ProductInput {
  return {
    catalogId,
    name: definition.name,
    version: definition.version,
    title: definition.title,
    state,
    viewType: definition.visibility.view.type,
    subscribeType: definition.visibility.subscribe.type,
    viewOrgs: definition.visibility.view.orgs,
    subscribeOrgs: definition.visibility.subscribe.orgs,
    document: definition.document,
    plans: definition.plans.map((plan) => ({
      name: plan.name,
      title: plan.title,
      description: plan.description ?? '',
      approval: plan.approval,
      rateLimits: plan.rateLimits,
      burstLimits: plan.burstLimits,
    })),
    apis,
  };
}

/**
 * A catalog serves one API per base path: `apis` (about to be served by a publish, or with a
 * new base path) may not share one with a different API the catalog serves, other than through
 * `productId` (as in API Connect). Call under the catalog's lock (`orgs.lockCatalogs`).
 */
export async function checkBasePaths(
  db: Db,
  catalogId: string,
  apis: Array<{ id: string; name: string; version: string; base_path: string }>,
  productId: string | undefined,
): Promise<void> {
  if (apis.length === 0) return;
  const trimmed = (path: string) => path.replace(/\/$/, '');
  for (const other of await apisRepo.servedApiBasePaths(db, catalogId, productId)) {
    const clash = apis.find((api) => api.id !== other.id && trimmed(api.base_path) === trimmed(other.base_path));
    if (clash) {
      const served = `${other.name}:${other.version} (product ${other.product_name}:${other.product_version})`;
      const reason = `API ${clash.name}:${clash.version} has base path ${clash.base_path || '/'}, already served in this catalog by ${served}`;
      throw new PorticoError('MGMT_CONFLICT', { field: 'basePath', reason });
    }
  }
}

/**
 * An API stored before the fail-closed rule is refused at publish as it would be at import; the
 * registries and providers its schemes name are enabled in the catalog (read once per check run).
 */
async function checkSecurity(db: Db, links: Array<{ api: LoadedApi }>, catalogId: string): Promise<void> {
  const namesEnabled = catalogNamesCheck(db, catalogId);
  for (const { api: loaded } of links) {
    const api = { name: loaded.row.name, version: loaded.row.version, document: loaded.document() };
    const problems = securityProblems(api.document);
    if (problems.length > 0) throw new DefinitionError(`${api.name}:${api.version}`, problems);
    await namesEnabled(api);
  }
}

async function sameApiLinks(db: Db, productId: string, links: ApiLink[]): Promise<boolean> {
  const current = await products.listProductApis(db, productId);
  const key = (id: string, k: string) => `${id}|${k}`;
  const a = new Set(current.map((c) => key(c.id, c.api_key)));
  return a.size === links.length && links.every((l) => a.has(key(l.apiId, l.key)));
}

export async function product(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  name: string,
  version: string,
): Promise<ProductRow> {
  const target = await catalog(context, orgId, catalogName);
  const found = await products.findProduct(context.store.db, target.id, name, version);
  if (!found) throw notFound('product', `${name}:${version}`);
  return found;
}

/** Moves a product along its lifecycle; publishing brings its APIs online, retiring cancels its subscriptions. */
export async function setProductState(
  context: ServiceContext,
  orgId: string,
  catalogName: string,
  name: string,
  version: string,
  state: ProductState,
  activate = true,
): Promise<ProductRow & { activated: string[] }> {
  const found = await product(context, orgId, catalogName, name, version);
  const checked = await checkStep(context.store.db, found.id, state, activate, false);
  if (checked.unchanged) return { ...checked.current, activated: [] };
  return change(context, 'product-state', async (trx) => {
    // Checked again under the catalog's lock on what is stored now (see putProduct).
    await orgs.lockCatalogs(trx, context.store.dialect, [found.catalog_id]);
    const { current, offline } = await checkStep(trx, found.id, state, activate, true);
    await bringOnline(trx, offline);
    await products.setProductState(trx, current.id, state);
    if (state === 'retired' || state === 'archived') await cancelProductSubscriptions(trx, current.id);
    return { ...current, state, activated: offline.map(apiRef) };
  });
}

/**
 * Whether the product may move to `state` as the store holds it through `db`, and what that brings
 * online; the publish rules only under the catalog's lock (`locked`), a no-op never meeting them.
 */
async function checkStep(db: Db, productId: string, state: ProductState, activate: boolean, locked: boolean) {
  const current = await products.findProductById(db, productId);
  if (!current) throw notFound('product', productId);
  const ref = `${current.name}:${current.version}`;
  if (current.state !== state && !productTransitions[current.state].includes(state)) {
    throw new PorticoError('MGMT_CONFLICT', {
      reason: `product ${ref} is ${current.state} and cannot become ${state}`,
    });
  }
  const links = (await products.listProductApis(db, current.id)).map((api) => ({ apiId: api.id, key: api.api_key }));
  const apis = state === 'published' ? await loadApis(db, links) : undefined;
  const offline = apis ? offlineApis(ref, apis, activate) : [];
  const unchanged = current.state === state && offline.length === 0;
  // A staged or retired product published through its lifecycle meets the same rules as one
  // published from its document (the base paths were not checked here before).
  if (apis && locked && !unchanged) {
    const document = JSON.parse(current.document) as Record<string, unknown>;
    await checkPublishable(db, current.catalog_id, apis, current.id, ref, document);
  }
  return { current, offline, unchanged };
}
