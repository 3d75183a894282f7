/**
 * The gateway's snapshot: an immutable, compiled picture of every catalog's published, online
 * APIs — router, compiled flows, parameter checks, credential and subscription indexes, plan
 * limits. It is built off the request path and swapped in whole; a request keeps the snapshot
 * it started with. Compiled APIs are reused from the previous snapshot when neither the API
 * nor its catalog changed, so a publish recompiles only what it touched.
 */
import type { Logger } from 'pino';
import type { ApiDefinition } from '../definitions/types.ts';
import type { PolicyRegistry } from './flow.ts';
import type { PolicySettings, Step } from '../policies/types.ts';
import type { ReloadBase, SnapshotData } from '../store/snapshot-data.ts';
import { catalogRoutes } from './router.ts';
import type { ApiRoutes, CatalogRoutes } from './router.ts';
import { credentialIndex, interner } from './credentials.ts';
import type { CredentialInfo } from './credentials.ts';
import { planShares, subscribersByProduct } from './subscriptions.ts';
import type { SubscriptionInfo } from './subscriptions.ts';
import type { CompiledParameter } from './parameters.ts';
import type { OperationSecurity } from './security/index.ts';
import { compileRegistries } from '../identity/verifiers.ts';
import { tlsProfilesOf } from '../policies/invoke/dispatchers.ts';
import type { CatalogRegistries } from '../identity/verifiers.ts';
import { compileProviders } from '../oauth/compile.ts';
import type { CatalogProviders } from '../oauth/compile.ts';
import { wholly } from '../time-slices.ts';
import { compileApi } from './compile-api.ts';
import type { TimeSlices } from '../time-slices.ts';

export interface CompiledOperation {
  id: string | undefined;
  verb: string;
  path: string;
  parameters: CompiledParameter[];
  /** The operation's security requirements, compiled (or refused: never open by omission). */
  security: OperationSecurity;
  bodyRequired: boolean;
  /**
   * The `api.*` context variables of a call to this operation (`api.operation` included), built
   * once and shared by its requests: the flow context copies a tree before writing to it.
   */
  contextApi: Record<string, unknown>;
}

export type { CatalogRoutes } from './router.ts';
export type { PlanShared, SubscriptionInfo } from './subscriptions.ts';
export type { AppInfo, CredentialInfo } from './credentials.ts';

export interface CompiledApi extends ApiRoutes {
  id: string;
  name: string;
  version: string;
  title: string;
  basePath: string;
  orgName: string;
  catalogName: string;
  definition: ApiDefinition;
  properties: Record<string, string>;
  flow: Step;
  /**
   * One entry per published product containing the API: the key the product gives it (what a
   * plan's `apis:` list names) and its subscribers (appId → subscription), shared with its other APIs.
   */
  productSubscriptions: Array<{ key: string; subscribers: Map<string, SubscriptionInfo> }>;
  /** Header (lower-case) and query names the API's security schemes name: never logged in clear. */
  credentialNames: { headers: ReadonlySet<string>; query: ReadonlySet<string> };
}

/** An API left out of a snapshot: `name:version`, where it is published, and the compiler's reason. */
export interface CompileFailure {
  api: string;
  org: string;
  catalog: string;
  reason: string;
}

export interface Snapshot {
  change: number;
  builtAt: number;
  compileMs: number;
  catalogs: Map<string, CatalogRoutes>;
  credentials: Map<string, CredentialInfo>;
  apiCount: number;
  /** Each catalog's native OAuth providers, by `org/catalog` (the gateway routes their endpoints). */
  oauth: Map<string, CatalogProviders>;
  /** Revoked access token ids and grant ids, until the tokens would have expired. */
  revoked: ReadonlySet<string>;
  /** APIs that failed to compile, with the reason (they are left out, not half-served; shown by /ready). */
  failures: CompileFailure[];
  /** Each product's subscribers by app, and what the next reload compares with (kept where unchanged). */
  subscribersOf: ReadonlyMap<string, Map<string, SubscriptionInfo>>;
  base?: ReloadBase;
}

export interface SnapshotOptions {
  registry: PolicyRegistry;
  settings: PolicySettings;
  logger: Logger;
  /** The previous snapshot's compiled APIs, to reuse. */
  previous?: Snapshot;
  /** Gives the event loop a turn between APIs when the slice is used (default: none). */
  slices?: TimeSlices;
}

/**
 * Thrown when an API must be compiled and the loader did not read its document (it expected the
 * previous snapshot's to be reused: store/snapshot-data.ts). The caller loads again with every
 * document; nothing is swapped in meanwhile.
 */
export class DocumentsNotRead extends Error {
  constructor(readonly apiIds: string[]) {
    super(`documents not read for ${apiIds.length} API(s) to compile: ${apiIds.slice(0, 5).join(', ')}`);
  }
}

/** Each catalog's enabled user registries, compiled, with a stamp that changes when any of them does. */
function catalogRegistries(
  data: SnapshotData,
  options: SnapshotOptions,
): Map<string, { compiled: CatalogRegistries; stamp: string }> {
  const rowsByCatalog = new Map<string, NonNullable<SnapshotData['userRegistries']>>();
  for (const row of data.userRegistries ?? []) {
    const rows = rowsByCatalog.get(row.catalog_id);
    if (rows) rows.push(row);
    else rowsByCatalog.set(row.catalog_id, [row]);
  }
  const orgOf = new Map(data.catalogs.map((catalog) => [catalog.id, catalog.orgName]));
  const out = new Map<string, { compiled: CatalogRegistries; stamp: string }>();
  for (const [catalogId, rows] of rowsByCatalog) {
    const stamp = rows
      .map((row) => `${row.id}@${row.updated_at}`)
      .sort()
      .join(',');
    // The TLS profiles this catalog's org may use (a profile's `orgs`), never another tenant's.
    const tlsProfiles = tlsProfilesOf(options.settings, orgOf.get(catalogId));
    const settings = { tlsProfiles, cache: options.settings.userRegistryCache };
    out.set(catalogId, { compiled: compileRegistries(rows, settings), stamp });
  }
  return out;
}

/** Each catalog's native OAuth providers, compiled with the registries the catalog enables. */
function catalogProviders(
  data: SnapshotData,
  registries: Map<string, { compiled: CatalogRegistries }>,
  options: SnapshotOptions,
): Map<string, CatalogProviders> {
  const oauth = data.oauth;
  if (oauth === undefined || oauth.providers.length === 0) return new Map();
  const catalogs = new Map(data.catalogs.map((c) => [c.id, c]));
  const refused = (provider: string, reason: string) =>
    options.logger.error({ provider, reason }, 'OAuth provider left out of the snapshot');
  return compileProviders(oauth.providers, oauth.keys, catalogs, (id) => registries.get(id)?.compiled, refused);
}

/** Builds a snapshot from the store's data; throws {@link DocumentsNotRead} when it lacks a document it needs. */
export async function compileSnapshot(data: SnapshotData, options: SnapshotOptions): Promise<Snapshot> {
  const started = performance.now();
  const slices = options.slices ?? wholly();
  const unread: string[] = [];
  // catalog id|api id → updated_at of each API compiled or reused (the next load's ReloadBase.compiled)
  const versions = new Map<string, string>();
  const catalogs = new Map<string, CatalogRoutes>();
  const catalogById = new Map(data.catalogs.map((c) => [c.id, c]));
  const apiById = new Map(data.apis.map((a) => [a.id, a]));
  const failures: Snapshot['failures'] = [];
  const reuse = new Map<string, CompiledApi>();
  for (const routes of options.previous?.catalogs.values() ?? []) {
    for (const api of routes.apis) reuse.set(`${api.id}|${api.orgName}|${api.catalogName}`, api);
  }

  const registries = catalogRegistries(data, options);
  const providers = catalogProviders(data, registries, options);
  // catalog id → api id → compiled api
  const compiled = new Map<string, Map<string, CompiledApi>>();
  const productsById = new Map(data.products.map((p) => [p.id, p]));
  for (const link of data.productApis) {
    await slices.pause();
    const product = productsById.get(link.product_id);
    const row = apiById.get(link.api_id);
    const catalog = product ? catalogById.get(product.catalog_id) : undefined;
    if (!product || !row || !catalog) continue;
    let byApi = compiled.get(catalog.id);
    if (!byApi) compiled.set(catalog.id, (byApi = new Map()));
    if (byApi.has(row.id)) continue;
    const cacheKey = `${row.id}|${catalog.orgName}|${catalog.name}`;
    const cached = reuse.get(cacheKey);
    const enabled = registries.get(catalog.id) ?? { compiled: new Map(), stamp: '' };
    const catalogProviders = providers.get(catalog.id);
    // An API is reused only when neither it nor the registries and providers its catalog enables changed.
    const version = `${row.updated_at}|${enabled.stamp}|${catalogProviders?.stamp ?? ''}`;
    try {
      const same = cached && (cached as CompiledApi & { updatedAt?: string }).updatedAt === version;
      const document = row.document;
      if (!same && document === undefined) {
        unread.push(row.id);
        continue;
      }
      const api = same
        ? { ...cached, productSubscriptions: [] }
        : compileApi({ ...row, document: document! }, catalog, options, enabled.compiled, catalogProviders);
      (api as CompiledApi & { updatedAt?: string }).updatedAt = version;
      byApi.set(row.id, api);
      versions.set(`${catalog.id}|${row.id}`, row.updated_at);
    } catch (error) {
      const reason = (error as Error).message;
      failures.push({
        api: `${row.name}:${row.version}`,
        org: catalog.orgName,
        catalog: catalog.name,
        reason,
      });
      options.logger.error(
        { api: `${row.name}:${row.version}`, catalog: catalog.name, err: error },
        'API left out of the snapshot: it does not compile',
      );
    }
  }

  if (unread.length > 0) throw new DocumentsNotRead(unread);
  const shares = planShares(data, productsById);
  // One copy of each repeated string (app ids key subscriptions of every product).
  const one = interner();
  const credentials = await credentialIndex(data, one, options.previous?.credentials, slices);
  const subscribersOf = await subscribersByProduct(data, shares, one, options.previous?.subscribersOf, slices);
  for (const link of data.productApis) {
    const product = productsById.get(link.product_id);
    const api = product ? compiled.get(product.catalog_id)?.get(link.api_id) : undefined;
    const subscribers = subscribersOf.get(link.product_id);
    if (api && subscribers) api.productSubscriptions.push({ key: link.api_key, subscribers });
  }

  let apiCount = 0;
  for (const [catalogId, byApi] of compiled) {
    const catalog = catalogById.get(catalogId)!;
    apiCount += byApi.size;
    catalogs.set(
      `${catalog.orgName}/${catalog.name}`,
      catalogRoutes(catalog.orgName, catalog.name, [...byApi.values()]),
    );
  }

  const oauth = new Map<string, CatalogProviders>();
  for (const [catalogId, catalogProviders] of providers) {
    const catalog = catalogById.get(catalogId);
    if (catalog) oauth.set(`${catalog.orgName}/${catalog.name}`, catalogProviders);
  }
  return {
    change: data.change,
    builtAt: Date.now(),
    oauth,
    revoked: new Set(data.oauth?.revoked ?? []),
    compileMs: performance.now() - started,
    catalogs,
    credentials,
    apiCount,
    failures,
    subscribersOf,
    base: data.base && { ...data.base, compiled: versions },
  };
}
