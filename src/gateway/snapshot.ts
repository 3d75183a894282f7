/**
 * The gateway's snapshot: an immutable, compiled picture of every catalog's published, online
 * APIs — router, compiled flows, parameter checks, credential and subscription indexes, plan
 * limits. It is built off the request path and swapped in whole; a request keeps the snapshot
 * it started with. Compiled APIs are reused from the previous snapshot when neither the API
 * nor its catalog changed, so a publish recompiles only what it touched.
 */
import type { Logger } from 'pino';
import { normaliseApi } from '../definitions/normalise-api.ts';
import { parseRateLimit } from '../definitions/parse-rate-limit.ts';
import type { ApiDefinition, OperationDef, ParameterDef, RateLimitDef } from '../definitions/types.ts';
import { compileAssembly } from './flow.ts';
import type { PolicyRegistry } from './flow.ts';
import type { CallerLimits, PolicySettings, Step } from '../policies/types.ts';
import { rulesFromPlan } from '../ratelimit/index.ts';
import type { LimitRule } from '../ratelimit/types.ts';
import type { SnapshotData } from '../store/snapshot-data.ts';
import { compileParameter } from './parameters.ts';
import type { CompiledParameter } from './parameters.ts';
import { rawOperations } from '../definitions/api-operations.ts';
import { compileOperationSecurity, credentialNames } from './security/index.ts';
import type { OperationSecurity } from './security/index.ts';
import { compileRegistries } from '../identity/verifiers.ts';
import type { CatalogRegistries } from '../identity/verifiers.ts';
import { compileProviders } from '../oauth/compile.ts';
import type { CatalogProviders } from '../oauth/compile.ts';

export interface CompiledOperation {
  id: string | undefined;
  verb: string;
  path: string;
  parameters: CompiledParameter[];
  /** The operation's security requirements, compiled (or refused: never open by omission). */
  security: OperationSecurity;
  bodyRequired: boolean;
}

interface TemplateRoute {
  pattern: RegExp;
  names: string[];
  operations: Map<string, CompiledOperation>;
}

/** What every subscription to one plan shares: built once per plan, not per subscription. */
export interface PlanShared {
  planId: string;
  planName: string;
  planTitle: string;
  planVersion: string;
  productName: string;
  productVersion: string;
  productTitle: string;
  rules: readonly LimitRule[];
  /** `plan.rate-limit` as API Connect writes it, e.g. `100/1hour`, or `unlimited`. */
  rateLimitText: string;
  /** The plan's assembly-rate-limits by name. */
  named: Record<string, readonly LimitRule[]>;
}

/**
 * One live subscription: its id and state, and the plan's shared facts. Three fields per
 * subscription, so a catalog with 100 000 subscriptions stays small.
 */
export class SubscriptionInfo {
  constructor(
    readonly id: string,
    readonly state: 'active' | 'pending',
    readonly plan: PlanShared,
  ) {}
  get planId() {
    return this.plan.planId;
  }
  get planName() {
    return this.plan.planName;
  }
  get planTitle() {
    return this.plan.planTitle;
  }
  get planVersion() {
    return this.plan.planVersion;
  }
  get productName() {
    return this.plan.productName;
  }
  get productVersion() {
    return this.plan.productVersion;
  }
  get productTitle() {
    return this.plan.productTitle;
  }
  get rules() {
    return this.plan.rules;
  }
  get rateLimitText() {
    return this.plan.rateLimitText;
  }
  /** What an assembly `ratelimit` policy counts against for this subscription. */
  get limits(): CallerLimits {
    return { key: this.id, plan: this.plan.rules, named: this.plan.named };
  }
}

export interface CompiledApi {
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
  /** Operations by `VERB /path` for paths without templates. */
  staticRoutes: Map<string, Map<string, CompiledOperation>>;
  templateRoutes: TemplateRoute[];
  /** One map per published product containing the API (appId → subscription), shared with the product's other APIs. */
  productSubscriptions: Array<Map<string, SubscriptionInfo>>;
  /** `api.*` context variables, built once. */
  contextApi: Record<string, unknown>;
  /** Header (lower-case) and query names the API's security schemes name: never logged in clear. */
  credentialNames: { headers: ReadonlySet<string>; query: ReadonlySet<string> };
}

export interface CatalogRoutes {
  orgName: string;
  catalogName: string;
  /** By base path, longest first, so `/a/b` wins over `/a`. */
  apis: CompiledApi[];
  /**
   * The same APIs by the first segment of their base path (`/logistics`), longest base path
   * first, so a request looks only at the APIs that can match it: with 1 000 APIs in a catalog
   * routing stays a Map lookup and a few comparisons.
   */
  bySegment: Map<string, CompiledApi[]>;
  /** APIs whose base path is `/` (empty once normalised): they match any path, after the others. */
  rootApis: CompiledApi[];
}

/** `/logistics/v2/x` → `/logistics`. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path : path.slice(0, end);
}

/** Builds a catalog's routing table from its APIs, sorted longest base path first. */
function catalogRoutes(orgName: string, catalogName: string, apis: CompiledApi[]): CatalogRoutes {
  const bySegment = new Map<string, CompiledApi[]>();
  const rootApis: CompiledApi[] = [];
  for (const api of apis) {
    if (api.basePath === '') {
      rootApis.push(api);
      continue;
    }
    const key = firstSegment(api.basePath);
    const list = bySegment.get(key);
    if (list) list.push(api);
    else bySegment.set(key, [api]);
  }
  return { orgName, catalogName, apis, bySegment, rootApis };
}

export interface AppInfo {
  id: string;
  title: string;
  consumerOrgId: string;
  consumerOrgName: string;
  consumerOrgTitle: string;
  /** Registered OAuth redirect URIs (matched exactly by the authorize endpoint). */
  redirectUris: readonly string[];
  /** The catalog of the app's consumer org: the only catalog whose OAuth providers serve it. */
  catalogId?: string;
}

export interface CredentialInfo {
  secretHash: string;
  app: AppInfo;
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
}

export interface SnapshotOptions {
  registry: PolicyRegistry;
  settings: PolicySettings;
  logger: Logger;
  /** The previous snapshot's compiled APIs, to reuse. */
  previous?: Snapshot;
}

/** Compiles a path template `/items/{id}` into a matcher. */
function templateMatcher(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split(/(\{[^}]+\})/)
    .map((piece) => {
      const m = /^\{([^}]+)\}$/.exec(piece);
      if (m) {
        names.push(m[1]);
        return '([^/]+)';
      }
      return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return { pattern: new RegExp(`^${source}/?$`), names };
}

function resolvedProperties(definition: ApiDefinition, catalogName: string): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const [name, property] of Object.entries(definition.properties)) properties[name] = property.value;
  Object.assign(properties, definition.catalogProperties[catalogName] ?? {});
  return properties;
}

/** The assembly API Connect gives an API without one: invoke `$(target-url)$(request.path)`. */
function defaultAssembly(properties: Record<string, string>): { execute: unknown[] } {
  if (properties['target-url']) {
    return {
      execute: [
        {
          invoke: {
            title: 'invoke',
            'target-url': '$(target-url)$(api.operation.path)$(request.search)',
            verb: 'keep',
          },
        },
      ],
    };
  }
  return {
    execute: [{ throw: { name: 'NoAssemblyError', message: 'This API has no assembly and no target-url property' } }],
  };
}

function compileApi(
  row: SnapshotData['apis'][number],
  catalog: SnapshotData['catalogs'][number],
  options: SnapshotOptions,
  registries: CatalogRegistries,
  providers?: CatalogProviders,
): CompiledApi {
  const document = JSON.parse(row.document) as Record<string, unknown>;
  const openapi = document.swagger === '2.0' ? '2.0' : String(document.openapi ?? '').startsWith('3.1') ? '3.1' : '3.0';
  const definition = normaliseApi(document, openapi);
  const properties = resolvedProperties(definition, catalog.name);
  const flow = compileAssembly(
    definition.assembly ?? defaultAssembly(properties),
    {
      name: definition.name,
      version: definition.version,
      document,
      properties,
      catalog: { name: catalog.name, orgName: catalog.orgName },
      settings: options.settings,
      userRegistries: registries,
    },
    options.registry,
  );

  const staticRoutes = new Map<string, Map<string, CompiledOperation>>();
  const templates = new Map<string, TemplateRoute>();
  const written = new Map(rawOperations(document).map((raw) => [`${raw.verb} ${raw.path}`, raw.operation]));
  for (const operation of definition.operations) {
    const writtenOperation = written.get(`${operation.verb} ${operation.path}`) ?? {};
    const security = compileOperationSecurity(document, writtenOperation, {
      properties,
      settings: options.settings,
      registries,
      providers: providers?.byName,
    });
    if (security.refused) refusedOperation(options, catalog, definition, operation, security.reason);
    const compiled: CompiledOperation = {
      id: operation.id,
      verb: operation.verb.toUpperCase(),
      path: operation.path,
      parameters: operation.parameters.filter((p) => p.in !== 'body').map((p: ParameterDef) => compileParameter(p)),
      security,
      bodyRequired: operation.requestBodyRequired === true,
    };
    if (operation.path.includes('{')) {
      let route = templates.get(operation.path);
      if (!route) {
        route = { ...templateMatcher(operation.path), operations: new Map() };
        templates.set(operation.path, route);
      }
      route.operations.set(compiled.verb, compiled);
    } else {
      const key = operation.path.replace(/\/$/, '') || '/';
      let byVerb = staticRoutes.get(key);
      if (!byVerb) staticRoutes.set(key, (byVerb = new Map()));
      byVerb.set(compiled.verb, compiled);
    }
  }
  // More literal characters first: `/items/count` before `/items/{id}`.
  const templateRoutes = [...templates.entries()]
    .sort((a, b) => b[0].replace(/\{[^}]+\}/g, '').length - a[0].replace(/\{[^}]+\}/g, '').length)
    .map(([, route]) => route);

  return {
    id: row.id,
    name: definition.name,
    version: definition.version,
    title: definition.title,
    basePath: definition.basePath.replace(/\/$/, ''),
    orgName: catalog.orgName,
    catalogName: catalog.name,
    definition,
    properties,
    flow,
    staticRoutes,
    templateRoutes,
    productSubscriptions: [],
    contextApi: {
      id: row.id,
      name: definition.name,
      version: definition.version,
      title: definition.title,
      type: definition.type,
      root: definition.basePath,
      properties,
      org: { id: catalog.orgId, name: catalog.orgName },
      catalog: { id: catalog.id, name: catalog.name, path: `/${catalog.orgName}/${catalog.name}` },
    },
    credentialNames: credentialNames(document),
  };
}

/** An operation whose security cannot be enforced is served as a refusal; the provider learns why from the log. */
function refusedOperation(
  options: SnapshotOptions,
  catalog: SnapshotData['catalogs'][number],
  definition: ApiDefinition,
  operation: OperationDef,
  reason: string,
): void {
  const api = `${definition.name}:${definition.version}`;
  const where = {
    api,
    catalog: catalog.name,
    operation: `${operation.verb.toUpperCase()} ${operation.path}`,
  };
  options.logger.error({ ...where, reason }, 'operation refused: its security cannot be enforced');
}

/** A plan's `assembly-rate-limits` / `assembly-burst-limits` as rules, read from the product document. */
function assemblyLimitsOf(productDocument: string, planName: string): Record<string, readonly LimitRule[]> {
  const document = JSON.parse(productDocument) as { plans?: Record<string, Record<string, unknown>> };
  const plan = document.plans?.[planName];
  if (!plan) return {};
  const out: Record<string, LimitRule[]> = {};
  for (const [field, hard] of [
    ['assembly-rate-limits', false],
    ['assembly-burst-limits', true],
  ] as const) {
    const written = plan[field];
    if (typeof written !== 'object' || written === null) continue;
    for (const [name, value] of Object.entries(written as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        const limit = item as { value?: string; 'hard-limit'?: boolean };
        const parsed = parseRateLimit(String(limit.value));
        if (parsed.unlimited) continue;
        (out[name] ??= []).push({
          name,
          limit: parsed.count,
          windowMs: parsed.windowMs,
          hard: hard || limit['hard-limit'] === true,
        });
      }
    }
  }
  return out;
}

function rateLimitText(limits: RateLimitDef[]): string {
  const limited = limits.filter((l) => !l.unlimited);
  return limited.length === 0 ? 'unlimited' : limited.map((l) => l.value).join(', ');
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
  const settings = { tlsProfiles: options.settings.tlsProfiles, cache: options.settings.userRegistryCache };
  const out = new Map<string, { compiled: CatalogRegistries; stamp: string }>();
  for (const [catalogId, rows] of rowsByCatalog) {
    const stamp = rows
      .map((row) => `${row.id}@${row.updated_at}`)
      .sort()
      .join(',');
    out.set(catalogId, { compiled: compileRegistries(rows, settings), stamp });
  }
  return out;
}

const noRedirectUris: readonly string[] = Object.freeze([]);

function redirectUrisOf(written: string | undefined): readonly string[] {
  if (written === undefined || written === '[]') return noRedirectUris;
  const list = JSON.parse(written) as unknown;
  return Array.isArray(list) ? list.filter((uri): uri is string => typeof uri === 'string') : noRedirectUris;
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

/** Builds a snapshot from the store's data. */
export function compileSnapshot(data: SnapshotData, options: SnapshotOptions): Snapshot {
  const started = performance.now();
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
      const api = same
        ? { ...cached, productSubscriptions: [] }
        : compileApi(row, catalog, options, enabled.compiled, catalogProviders);
      (api as CompiledApi & { updatedAt?: string }).updatedAt = version;
      byApi.set(row.id, api);
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

  // Plans → what their subscriptions share, once per plan.
  const planShared = new Map<string, PlanShared>();
  for (const plan of data.plans) {
    const product = productsById.get(plan.product_id);
    if (!product) continue;
    const rateLimits = JSON.parse(plan.rate_limits) as RateLimitDef[];
    const burstLimits = JSON.parse(plan.burst_limits) as RateLimitDef[];
    planShared.set(plan.id, {
      planId: plan.id,
      planName: plan.name,
      planTitle: plan.title,
      planVersion: product.version,
      productName: product.name,
      productVersion: product.version,
      productTitle: product.title,
      rules: rulesFromPlan(rateLimits, burstLimits),
      rateLimitText: rateLimitText(rateLimits),
      named: assemblyLimitsOf(product.document, plan.name),
    });
  }
  // Every row read from the store brings its own copy of each string: one copy per value is kept
  // (an app's id keys its subscriptions of every product; a consumer org's fields repeat per app).
  // At 100 000 subscriptions of 25 000 apps that is ~5 MB of a snapshot's ~35 MB.
  const seen = new Map<string, string>();
  const one = (value: string): string => {
    const kept = seen.get(value);
    if (kept !== undefined) return kept;
    seen.set(value, value);
    return value;
  };
  const apps = new Map<string, AppInfo>();
  for (const app of data.apps) {
    const id = one(app.id);
    apps.set(id, {
      id,
      title: app.title,
      consumerOrgId: one(app.consumer_org_id),
      consumerOrgName: one(app.consumer_org_name),
      consumerOrgTitle: one(app.consumer_org_title),
      redirectUris: redirectUrisOf(app.redirect_uris),
      catalogId: app.catalog_id === undefined ? undefined : one(app.catalog_id),
    });
  }
  // Products → their subscribers (appId → subscription), then each API points at the maps of
  // the products that contain it.
  const subscribersOf = new Map<string, Map<string, SubscriptionInfo>>();
  for (const subscription of data.subscriptions) {
    const shared = planShared.get(subscription.plan_id);
    if (!shared) continue;
    let subscribers = subscribersOf.get(subscription.product_id);
    if (!subscribers) subscribersOf.set(subscription.product_id, (subscribers = new Map()));
    const info = new SubscriptionInfo(subscription.id, subscription.state === 'active' ? 'active' : 'pending', shared);
    const appId = one(subscription.app_id);
    const current = subscribers.get(appId);
    // An active subscription wins over a pending one for the same app.
    if (!current || (current.state === 'pending' && info.state === 'active')) subscribers.set(appId, info);
  }
  for (const link of data.productApis) {
    const product = productsById.get(link.product_id);
    const api = product ? compiled.get(product.catalog_id)?.get(link.api_id) : undefined;
    const subscribers = subscribersOf.get(link.product_id);
    if (api && subscribers) api.productSubscriptions.push(subscribers);
  }

  let apiCount = 0;
  for (const [catalogId, byApi] of compiled) {
    const catalog = catalogById.get(catalogId)!;
    const apis = [...byApi.values()].sort((a, b) => b.basePath.length - a.basePath.length);
    apiCount += apis.length;
    catalogs.set(`${catalog.orgName}/${catalog.name}`, catalogRoutes(catalog.orgName, catalog.name, apis));
  }

  const credentials = new Map<string, CredentialInfo>();
  for (const credential of data.credentials) {
    const app = apps.get(credential.app_id);
    if (app) credentials.set(credential.client_id, { secretHash: credential.secret_hash, app });
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
  };
}

/** The subscription that lets `appId` call `api`: an active one over a pending one. */
export function subscriptionFor(api: CompiledApi, appId: string): SubscriptionInfo | undefined {
  let found: SubscriptionInfo | undefined;
  for (const subscribers of api.productSubscriptions) {
    const info = subscribers.get(appId);
    if (info === undefined) continue;
    if (info.state === 'active') return info;
    found ??= info;
  }
  return found;
}

export interface RouteMatch {
  api: CompiledApi;
  operation: CompiledOperation;
  pathParams: Record<string, string>;
}

export type RouteResult = RouteMatch | { notFound: true } | { methodNotAllowed: string[] };

/** Finds the API and operation for a path below the catalog (`/logistics/shipping`). */
export function matchRoute(catalog: CatalogRoutes, verb: string, path: string): RouteResult {
  const allowed: { verbs?: string[] } = {};
  const candidates = catalog.bySegment.get(firstSegment(path));
  if (candidates !== undefined) {
    for (const api of candidates) {
      const basePath = api.basePath;
      // path === basePath, or path continues it with `/` (no string built per API).
      if (!path.startsWith(basePath) || (path.length > basePath.length && path.charCodeAt(basePath.length) !== 47))
        continue;
      const match = matchOperation(api, verb, path, allowed);
      if (match !== undefined) return match;
    }
  }
  for (const api of catalog.rootApis) {
    const match = matchOperation(api, verb, path, allowed);
    if (match !== undefined) return match;
  }
  return allowed.verbs ? { methodNotAllowed: allowed.verbs } : { notFound: true };
}

/** The operation of `api` for the path below its base path; records the allowed verbs of a path that matched without its verb. */
function matchOperation(
  api: CompiledApi,
  verb: string,
  path: string,
  allowed: { verbs?: string[] },
): RouteMatch | undefined {
  const rest = path.slice(api.basePath.length) || '/';
  const key = rest.length > 1 && rest.endsWith('/') ? rest.slice(0, -1) : rest;
  const byVerb = api.staticRoutes.get(key);
  if (byVerb) {
    const operation = byVerb.get(verb) ?? (verb === 'HEAD' ? byVerb.get('GET') : undefined);
    if (operation) return { api, operation, pathParams: {} };
    allowed.verbs ??= [...byVerb.keys()];
  }
  for (const route of api.templateRoutes) {
    const m = route.pattern.exec(rest);
    if (!m) continue;
    const operation = route.operations.get(verb) ?? (verb === 'HEAD' ? route.operations.get('GET') : undefined);
    if (!operation) {
      allowed.verbs ??= [...route.operations.keys()];
      continue;
    }
    const pathParams: Record<string, string> = {};
    for (let i = 0; i < route.names.length; i++) {
      try {
        pathParams[route.names[i]] = decodeURIComponent(m[i + 1]);
      } catch {
        pathParams[route.names[i]] = m[i + 1];
      }
    }
    return { api, operation, pathParams };
  }
  return undefined;
}
