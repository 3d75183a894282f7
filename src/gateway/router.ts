/**
 * The routing phase, first of the request: `/{org}/{catalog}/{basePath}{path}` → catalog, API and
 * operation (DESIGN §3.1). The tables are built once per snapshot; per request it is a Map lookup
 * for the catalog, one for the first segment of the path, and a few comparisons. An unknown
 * catalog, API or path is a 404, a known path without the verb a 405 with `Allow`
 * (RFC 9110 §15.5.6), in API Connect's envelope.
 */
import { compileLinearPattern } from '../definitions/linear-pattern.ts';
import { PorticoError } from '../errors.ts';
import { pathValueProblem } from '../policies/url-template.ts';
import type { CompiledApi, CompiledOperation } from './snapshot.ts';

/** A path template's matcher: the whole match, then one value per name; null when it does not match. */
interface TemplatePattern {
  exec(path: string): readonly string[] | null;
}

/** The operations of one path template (`/items/{id}`), by verb. */
export interface TemplateRoute {
  pattern: TemplatePattern;
  names: string[];
  operations: Map<string, CompiledOperation>;
}

/** One API's operations: literal paths by `path → verb`, templates most literal first. */
export interface ApiRoutes {
  /** Operations by path then verb, for paths without templates. */
  staticRoutes: Map<string, Map<string, CompiledOperation>>;
  templateRoutes: TemplateRoute[];
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

export interface RouteMatch {
  api: CompiledApi;
  operation: CompiledOperation;
  pathParams: Record<string, string>;
}

type RouteResult = RouteMatch | { notFound: true } | { methodNotAllowed: string[] };

/** A routed request: the operation, and the path below the catalog (`request.path`). */
export type Route = (RouteMatch | { preflight: string[] }) & { path: string };

/** `/logistics/v2/x` → `/logistics`. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end < 0 ? path : path.slice(0, end);
}

/**
 * Compiles a path template `/items/{id}` into a matcher. A segment holding one value is linear
 * on V8's engine (`[^/]+` stops at the next slash), but two or more values in one segment
 * (`/dates/{y}-{m}-{d}`) backtrack over each other: cubic in the path, 1.2 s for 1,600
 * characters. Such templates match on the linear engine (definitions/linear-pattern.ts) instead.
 */
function templateMatcher(path: string): { pattern: TemplatePattern; names: string[] } {
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
  const whole = `^${source}/?$`;
  const sharedSegment = path.split('/').some((segment) => (segment.match(/\{[^}]+\}/g) ?? []).length > 1);
  if (!sharedSegment) return { pattern: new RegExp(whole), names };
  const linear = compileLinearPattern(whole);
  // Every group takes part in a match: none is left undefined.
  return { pattern: { exec: (text) => linear.find(text)?.groups.map((value) => value ?? '') ?? null }, names };
}

/** Builds one API's routing tables from its compiled operations. */
export function apiRoutes(operations: readonly CompiledOperation[]): ApiRoutes {
  const staticRoutes = new Map<string, Map<string, CompiledOperation>>();
  const templates = new Map<string, TemplateRoute>();
  for (const operation of operations) {
    if (operation.path.includes('{')) {
      let route = templates.get(operation.path);
      if (!route)
        templates.set(operation.path, (route = { ...templateMatcher(operation.path), operations: new Map() }));
      route.operations.set(operation.verb, operation);
    } else {
      const key = operation.path.replace(/\/$/, '') || '/';
      let byVerb = staticRoutes.get(key);
      if (!byVerb) staticRoutes.set(key, (byVerb = new Map()));
      byVerb.set(operation.verb, operation);
    }
  }
  // More literal characters first: `/items/count` before `/items/{id}`.
  const literal = (template: string) => template.replace(/\{[^}]+\}/g, '').length;
  const templateRoutes = [...templates.entries()]
    .sort((a, b) => literal(b[0]) - literal(a[0]))
    .map(([, route]) => route);
  return { staticRoutes, templateRoutes };
}

/** Builds a catalog's routing table from its APIs, sorted longest base path first. */
export function catalogRoutes(orgName: string, catalogName: string, apis: CompiledApi[]): CatalogRoutes {
  const sorted = [...apis].sort((a, b) => b.basePath.length - a.basePath.length);
  const bySegment = new Map<string, CompiledApi[]>();
  const rootApis: CompiledApi[] = [];
  for (const api of sorted) {
    if (api.basePath === '') {
      rootApis.push(api);
      continue;
    }
    const key = firstSegment(api.basePath);
    const list = bySegment.get(key);
    if (list) list.push(api);
    else bySegment.set(key, [api]);
  }
  return { orgName, catalogName, apis: sorted, bySegment, rootApis };
}

/**
 * The path and query of a request target (`/org/cat/api/x?y=1`).
 * @throws PorticoError `GW_INVALID_PATH` (400) for a backslash or a dot segment, even encoded:
 *   servers behind the gateway read `\` as `/` and resolve `%2e%2e`, so it is refused before routing.
 */
export function requestTarget(url: string): { pathname: string; search: string } {
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const unsafe = pathValueProblem(pathname);
  if (unsafe !== undefined) throw new PorticoError('GW_INVALID_PATH', { reason: unsafe });
  return { pathname, search: q < 0 ? '' : url.slice(q) };
}

/** API URLs have at least three segments, so one-segment paths are free for the node's status. */
export function isStatusPath(pathname: string): boolean {
  return pathname.indexOf('/', 1) < 0;
}

/**
 * Routes a request of at least two segments. A CORS preflight (`preflight`) to a path that has
 * operations, none for OPTIONS, is answered with the path's verbs instead of a 405.
 * @throws PorticoError `GW_NOT_FOUND` (404) or `GW_METHOD_NOT_ALLOWED` (405, `Allow` header).
 */
export function routeRequest(
  catalogs: ReadonlyMap<string, CatalogRoutes>,
  verb: string,
  pathname: string,
  preflight = false,
): Route {
  const second = pathname.indexOf('/', 1);
  const third = pathname.indexOf('/', second + 1);
  const catalog = catalogs.get(third < 0 ? pathname.slice(1) : pathname.slice(1, third));
  if (catalog === undefined) throw new PorticoError('GW_NOT_FOUND');
  const path = third < 0 ? '/' : pathname.slice(third);
  const match = matchRoute(catalog, verb, path);
  if ('notFound' in match) throw new PorticoError('GW_NOT_FOUND');
  if ('methodNotAllowed' in match) {
    const verbs = match.methodNotAllowed;
    if (preflight) return { preflight: verbs, path };
    throw new PorticoError('GW_METHOD_NOT_ALLOWED', { method: verb }, { headers: { Allow: verbs.join(', ') } });
  }
  return { api: match.api, operation: match.operation, pathParams: match.pathParams, path };
}

/** Finds the API and operation for a path below the catalog (`/logistics/shipping`). */
function matchRoute(catalog: CatalogRoutes, verb: string, path: string): RouteResult {
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
