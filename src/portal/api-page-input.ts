/**
 * Everything an API page shows, read once per request: the product and API the visitor may
 * see, the operations with the security the gateway enforces for each, the developer's apps,
 * the catalog's OAuth providers and user registries, and the tokens this session got by
 * authorization code (their scope and expiry, never the token).
 */
import type { FastifyRequest } from 'fastify';
import { apiView } from '../web/openapi-view.ts';
import type { ApiPageInput } from './api-page.ts';
import { portalContext, signedIn } from './context.ts';
import type { PortalDeps } from './deps.ts';
import { callbackPath, sessionToken } from './oauth-code.ts';
import { issuerUrl } from './oauth-view.ts';
import type { TryToken } from './oauth-view.ts';
import { operationSecurity } from './operation-security.ts';
import { productUrl } from './routes/products.ts';

export interface ApiParams {
  name: string;
  version: string;
  apiName: string;
  apiVersion: string;
}

function redirectUrisOf(text: string): string[] {
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? parsed.map(String) : [];
}

/** The API page's input for the request's `:name/:version/apis/:apiName/:apiVersion`. */
export async function loadApiPage(deps: PortalDeps, request: FastifyRequest): Promise<ApiPageInput> {
  const { services } = deps;
  const context = portalContext(request);
  const params = request.params as ApiParams;
  const product = await services.visibleProduct(context, params.name, params.version);
  const api = await services.visibleProductApi(context, product, params.apiName, params.apiVersion);
  const document = JSON.parse(api.document) as Record<string, unknown>;
  const view = apiView(document);
  const apps = signedIn(context)
    ? await Promise.all(
        (await services.listApps(context.org.id)).map(async (a) => ({
          app: a,
          credential: (await services.listCredentials(a.id))[0],
          redirectUris: redirectUrisOf(a.redirect_uris),
        })),
      )
    : [];
  const base = productUrl(product);
  const { orgName, catalogName } = context.catalog;
  const configs = await services.catalogOAuthProviders(context.catalog.catalogId);
  const oauthProviders = new Map(
    [...configs].map(([name, config]) => [
      name,
      { config, issuer: issuerUrl(deps.gatewayPublicUrl, orgName, catalogName, config) },
    ]),
  );
  const security = new Map(view.operations.map((o) => [o.anchor, operationSecurity(document, o.method, o.path)]));
  const named = new Set(
    [...security.values()].flatMap((s) => s.alternatives.flat().map((scheme) => scheme.provider ?? '')),
  );
  const sessionTokens = new Map<string, TryToken>();
  if (signedIn(context)) {
    for (const provider of [...named].filter((name) => configs.has(name))) {
      for (const { app } of apps) {
        const kept = await sessionToken(deps, context.session, provider, app.id);
        if (kept) sessionTokens.set(`${provider}|${app.id}`, kept.info);
      }
    }
  }
  return {
    context,
    product,
    api,
    view,
    apps,
    productUrl: base,
    apiUrl: `${base}/apis/${encodeURIComponent(api.name)}/${encodeURIComponent(api.version)}`,
    gatewayBase: `${deps.gatewayPublicUrl.replace(/\/$/, '')}/${orgName}/${catalogName}${api.base_path}`,
    oauthProviders,
    document,
    security,
    names: { registries: await services.catalogUserRegistryTitles(context.catalog.catalogId), providers: configs },
    sessionTokens,
    callbackUri: `${deps.portalPublicUrl()}${callbackPath}`,
  };
}
