/** Products in a catalog: create or update from YAML, and API Connect's product lifecycle. */
import { assemblyProblems } from '../../policies/check-assembly.ts';
import { parseApiDocument, parseProductDocument, securityProblems } from '../../definitions/index.ts';
import { checkNamedRegistries } from '../user-registries.ts';
import { checkNamedProviders } from '../oauth-providers.ts';
import type { ProductDefinition } from '../../definitions/types.ts';
import { DefinitionError, PorticoError } from '../../errors.ts';
import * as apisRepo from '../../store/apis.ts';
import { cancelProductSubscriptions } from '../../store/consumers.ts';
import * as products from '../../store/products.ts';
import type { ApiRow, ProductRow, ProductState } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';
import { change, notFound } from '../service-context.ts';
import type { ServiceContext } from '../service-context.ts';
import { catalog } from './organizations.ts';

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

interface ApiLink {
  apiId: string;
  key: string;
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
  const db = context.store.db;
  const definition = parseProductDocument(input.text, input.file);
  const target = await catalog(context, orgId, catalogName);
  const apiLinks = await resolveApis(context, orgId, definition, input);
  const existing = await products.findProduct(db, target.id, definition.name, definition.version);
  const state = input.state ?? existing?.state ?? 'staged';
  const apiIds = apiLinks.map((l) => l.apiId);
  if (state === 'published') {
    await checkBasePaths(context, target.id, apiIds, existing?.id);
    await checkSecurity(context, apiIds, target.id);
  }
  if (existing && existing.state !== state && !productTransitions[existing.state].includes(state)) {
    const reason = `product ${definition.name}:${definition.version} is ${existing.state} and cannot become ${state}`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  const ref = `${definition.name}:${definition.version}`;
  const offline = state === 'published' ? await offlineApis(context, ref, apiIds, input.activate) : [];
  const sameApis = existing ? await sameApiLinks(context, existing.id, apiLinks) : false;
  const sameDocument = existing?.document === JSON.stringify(definition.document);
  if (existing && sameDocument && existing.state === state && sameApis && offline.length === 0) {
    return { product: existing, definition, created: false, changed: false, activated: [] };
  }
  const row = productRow(target.id, definition, state, apiLinks);
  const { product, created } = await change(context, 'product', async (trx) => {
    await bringOnline(trx, offline);
    return products.upsertProduct(trx, row);
  });
  return { product, definition, created, changed: true, activated: offline.map(apiRef) };
}

const apiRef = (api: { name: string; version: string }) => `${api.name}:${api.version}`;

/**
 * The product's APIs that are offline. Publishing a product puts its APIs online in API Connect
 * ("Publishing a Product"), so they are returned to be brought online; with `activate: false`
 * the publish is refused instead, naming them.
 */
async function offlineApis(context: ServiceContext, product: string, apiIds: string[], activate = true) {
  const offline: ApiRow[] = [];
  for (const id of apiIds) {
    const api = await apisRepo.findApiById(context.store.db, id);
    if (api && api.state === 'offline') offline.push(api);
  }
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

/** The stored APIs a product names, by name:version or by a `$ref` to an attached file. */
async function resolveApis(
  context: ServiceContext,
  orgId: string,
  definition: ProductDefinition,
  input: ProductInput,
): Promise<ApiLink[]> {
  const links: ApiLink[] = [];
  for (const [index, entry] of definition.apis.entries()) {
    const target =
      'ref' in entry ? refTarget(entry.ref, input.attachments) : { name: entry.name, version: entry.version };
    const path = `$.apis.${entry.key}`;
    if (!target) {
      const reason = `the API file ${'ref' in entry ? entry.ref : ''} was not given with the product`;
      throw new PorticoError('DEF_INVALID', { file: input.file, path, rule: 'unresolved-ref', reason });
    }
    const api = await apisRepo.findApi(context.store.db, orgId, target.name, target.version);
    if (!api) {
      const reason = `the product names API ${target.name}:${target.version}, which does not exist (import it first)`;
      throw new PorticoError('DEF_INVALID', { file: input.file, path, rule: 'unknown-api', reason, index });
    }
    links.push({ apiId: api.id, key: entry.key });
  }
  return links;
}

/** The name and version of the API defined by the file a product names by `$ref`. */
function refTarget(
  ref: string,
  attachments: Record<string, string> | undefined,
): { name: string; version: string } | undefined {
  const file = ref.replace(/^\.\//, '');
  const text = attachments?.[file];
  if (text === undefined) return undefined;
  const definition = parseApiDocument(text, file, assemblyProblems);
  return { name: definition.name, version: definition.version };
}

/**
 * A catalog serves one API per base path: publishing a product whose API would share a base
 * path with a different API already published there is a conflict (as in API Connect).
 */
async function checkBasePaths(
  context: ServiceContext,
  catalogId: string,
  apiIds: string[],
  productId: string | undefined,
): Promise<void> {
  if (apiIds.length === 0) return;
  const mine = await apisRepo.apiBasePaths(context.store.db, apiIds);
  const trimmed = (path: string) => path.replace(/\/$/, '');
  for (const other of await apisRepo.servedApiBasePaths(context.store.db, catalogId, productId)) {
    const clash = mine.find((api) => api.id !== other.id && trimmed(api.base_path) === trimmed(other.base_path));
    if (clash) {
      const served = `${other.name}:${other.version} (product ${other.product_name}:${other.product_version})`;
      const reason = `API ${clash.name}:${clash.version} has base path ${clash.base_path || '/'}, already served in this catalog by ${served}`;
      throw new PorticoError('MGMT_CONFLICT', { reason });
    }
  }
}

/** An API stored before the fail-closed rule is refused at publish as it would be at import. */
async function checkSecurity(context: ServiceContext, apiIds: string[], catalogId: string): Promise<void> {
  for (const id of apiIds) {
    const api = await apisRepo.findApiById(context.store.db, id);
    if (!api) continue;
    const problems = securityProblems(JSON.parse(api.document) as Record<string, unknown>);
    if (problems.length > 0) throw new DefinitionError(`${api.name}:${api.version}`, problems);
    await checkNamedRegistries(context.store.db, catalogId, api);
    await checkNamedProviders(context.store.db, catalogId, api);
  }
}

async function sameApiLinks(context: ServiceContext, productId: string, links: ApiLink[]): Promise<boolean> {
  const current = await products.listProductApis(context.store.db, productId);
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
  const current = await product(context, orgId, catalogName, name, version);
  if (current.state !== state && !productTransitions[current.state].includes(state)) {
    const reason = `product ${name}:${version} is ${current.state} and cannot become ${state}`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  const apiIds = (await products.listProductApis(context.store.db, current.id)).map((api) => api.id);
  const offline = state === 'published' ? await offlineApis(context, `${name}:${version}`, apiIds, activate) : [];
  if (current.state === state && offline.length === 0) return { ...current, activated: [] };
  if (state === 'published') await checkSecurity(context, apiIds, current.catalog_id);
  await change(context, 'product-state', async (trx) => {
    await bringOnline(trx, offline);
    await products.setProductState(trx, current.id, state);
    if (state === 'retired' || state === 'archived') await cancelProductSubscriptions(trx, current.id);
  });
  return { ...current, state, activated: offline.map(apiRef) };
}
