/**
 * The management REST API's route table (`/api/...`): one entry per route, with the JSON schema
 * of its body, which also produces the API's OpenAPI document, so the two cannot drift apart.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { ProviderServices } from '../services/provider-services.ts';
import type { ProductState } from '../store/schema.ts';
import {
  apiParams,
  apiSummary,
  bearer,
  documentBody,
  orgId,
  param,
  productSummary,
  stringField,
} from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';
import { UserRegistries } from '../services/user-registries.ts';
import { userRegistryRoutes } from './user-registry-routes.ts';
import { OAuthProviders } from '../services/oauth-providers.ts';
import { oauthProviderRoutes } from './oauth-provider-routes.ts';
import { consumerRoutes } from './consumer-routes.ts';

/** The body of a product create or update. */
interface ProductBody {
  document: string;
  file?: string;
  state?: string;
  attachments?: Record<string, string>;
  activate?: boolean;
}
import { gatewayFailureRoute } from './gateway-failure-route.ts';

export function routes(services: ProviderServices, sessionTtlMs: number): RouteSpec[] {
  const moveProduct = async (request: FastifyRequest, state: ProductState) => {
    // `?activate=false` refuses to publish a product whose APIs are offline (default: brings them online).
    const activate = (request.query as { activate?: string }).activate !== 'false';
    const [catalog, name, version] = ['catalog', 'name', 'version'].map((key) => param(request, key));
    const moved = await services.setProductState(orgId(request), catalog, name, version, state, activate);
    return { ...productSummary(moved), activated: moved.activated };
  };

  return [
    ...userRegistryRoutes(new UserRegistries(services)),
    ...oauthProviderRoutes(new OAuthProviders(services)),
    ...consumerRoutes(services),
    gatewayFailureRoute(services),
    {
      method: 'POST',
      url: '/api/login',
      summary: 'Sign in as a provider user; returns a bearer token',
      tag: 'auth',
      public: true,
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: { username: stringField('Provider user name'), password: stringField('Password') },
      },
      handler: async (request) => {
        const { username, password } = request.body as { username: string; password: string };
        const user = await services.authenticateProvider(username, password, request.ip);
        const session = await services.sessions.create({
          kind: 'token',
          userId: user.id,
          ttlMs: sessionTtlMs * 90,
        });
        return {
          token: session.token,
          username: user.username,
          expiresAt: new Date(session.session.expires_at).toISOString(),
        };
      },
    },
    {
      method: 'POST',
      url: '/api/logout',
      summary: 'End the bearer token',
      tag: 'auth',
      status: 204,
      handler: async (request) => {
        const token = bearer(request);
        if (token) await services.sessions.delete(token);
        return null;
      },
    },
    {
      method: 'GET',
      url: '/api/me',
      summary: 'The signed-in provider user',
      tag: 'auth',
      handler: async (request) => {
        const user = request.providerUser!;
        // The org's name is what the /api/orgs/:org routes take (the CLI reads it here).
        const org = await services.org(user.org_id);
        return { username: user.username, email: user.email, org: org?.name };
      },
    },
    // ── APIs ──
    {
      method: 'GET',
      url: '/api/apis',
      summary: 'List APIs',
      tag: 'apis',
      handler: async (request) => (await services.listApis(orgId(request))).map(apiSummary),
    },
    {
      method: 'POST',
      url: '/api/apis',
      summary: 'Import an API document (created offline)',
      tag: 'apis',
      status: 201,
      body: documentBody,
      handler: async (request, reply) => {
        const body = request.body as {
          document: string;
          file?: string;
          attachments?: Record<string, string>;
          replace?: boolean;
          state?: string;
        };
        const state = body.state === 'online' || body.state === 'offline' ? body.state : undefined;
        const result = await services.importApi(orgId(request), {
          text: body.document,
          file: body.file ?? 'document',
          attachments: body.attachments,
          replace: body.replace,
          state,
        });
        if (!result.created) reply.status(200);
        return { ...apiSummary(result.api), created: result.created, changed: result.changed };
      },
    },
    {
      method: 'GET',
      url: '/api/apis/:name/:version',
      summary: 'Get an API with its definition document',
      tag: 'apis',
      handler: async (request) => {
        const api = await services.api(orgId(request), ...apiParams(request));
        return { ...apiSummary(api), document: JSON.parse(api.document) };
      },
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/targets',
      summary: 'Add a SOAP service from a WSDL to the API as an x-ibm-configuration.targets entry',
      tag: 'apis',
      body: documentBody,
      handler: async (request) => {
        const body = request.body as {
          document: string;
          file?: string;
          attachments?: Record<string, string>;
        };
        const result = await services.addWsdlTarget(orgId(request), ...apiParams(request), {
          text: body.document,
          file: body.file ?? 'service.wsdl',
          attachments: body.attachments,
        });
        return { ...apiSummary(result.api), target: result.service };
      },
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/activate',
      summary: 'Bring an API online',
      tag: 'apis',
      handler: async (request) =>
        apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'online')),
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/deactivate',
      summary: 'Take an API offline',
      tag: 'apis',
      handler: async (request) =>
        apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'offline')),
    },
    {
      method: 'DELETE',
      url: '/api/apis/:name/:version',
      summary: 'Delete an API no product uses',
      tag: 'apis',
      status: 204,
      handler: async (request) => {
        await services.deleteApi(orgId(request), ...apiParams(request));
        return null;
      },
    },
    // ── catalogs and products ──
    {
      method: 'GET',
      url: '/api/catalogs',
      summary: 'List catalogs',
      tag: 'catalogs',
      handler: async (request) => {
        return (await services.listCatalogs(orgId(request))).map((c) => ({ name: c.name, title: c.title }));
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs',
      summary: 'Create a catalog',
      tag: 'catalogs',
      status: 201,
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: stringField('Catalog name, used in gateway URLs'),
          title: stringField('Display title'),
        },
      },
      handler: async (request) => {
        const body = request.body as { name: string; title?: string };
        const catalog = await services.createCatalog(orgId(request), body.name, body.title ?? body.name);
        return { name: catalog.name, title: catalog.title };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/products',
      summary: 'List the products of a catalog',
      tag: 'products',
      handler: async (request) =>
        (await services.listProducts(orgId(request), param(request, 'catalog'))).map(productSummary),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products',
      summary: 'Create or update a product from its YAML; `state: published` publishes it and brings its APIs online',
      tag: 'products',
      status: 201,
      body: documentBody,
      handler: async (request, reply) => {
        const body = request.body as ProductBody;
        const state = body.state === 'staged' || body.state === 'published' ? body.state : undefined;
        const { document: text, file = 'product', attachments, activate } = body;
        const result = await services.putProduct(orgId(request), param(request, 'catalog'), {
          text,
          file,
          state,
          attachments,
          activate,
        });
        if (!result.created) reply.status(200);
        const { created, changed, activated } = result;
        return { ...productSummary(result.product), created, changed, activated };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/products/:name/:version',
      summary: 'Get a product with its plans and APIs',
      tag: 'products',
      handler: async (request) => {
        const product = await services.product(
          orgId(request),
          param(request, 'catalog'),
          param(request, 'name'),
          param(request, 'version'),
        );
        const plans = await services.productPlans(product.id);
        const apis = await services.productApis(product.id);
        return {
          ...productSummary(product),
          document: JSON.parse(product.document),
          plans: plans.map((p) => ({
            name: p.name,
            title: p.title,
            description: p.description,
            approval: p.approval === 1,
            rateLimits: JSON.parse(p.rate_limits),
            burstLimits: JSON.parse(p.burst_limits),
          })),
          apis: apis.map((a) => ({
            key: a.api_key,
            name: a.name,
            version: a.version,
            title: a.title,
            state: a.state,
            basePath: a.base_path,
          })),
        };
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/publish',
      summary: 'Publish a product, bringing its offline APIs online (`?activate=false` refuses instead)',
      tag: 'products',
      handler: (r) => moveProduct(r, 'published'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/deprecate',
      summary: 'Deprecate a product (existing subscribers only)',
      tag: 'products',
      handler: (r) => moveProduct(r, 'deprecated'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/retire',
      summary: 'Retire a product (ends its subscriptions)',
      tag: 'products',
      handler: (r) => moveProduct(r, 'retired'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/archive',
      summary: 'Archive a retired product',
      tag: 'products',
      handler: (r) => moveProduct(r, 'archived'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/stage',
      summary: 'Stage a product (back from retired, or a staged product again)',
      tag: 'products',
      handler: (r) => moveProduct(r, 'staged'),
    },
    // ── subscriptions and approvals ──
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/subscriptions',
      summary: 'List subscriptions (`?state=pending` for the approval task list)',
      tag: 'subscriptions',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        const state = (request.query as { state?: string }).state;
        if (state !== undefined && !['pending', 'active', 'rejected', 'cancelled'].includes(state)) {
          throw new PorticoError('MGMT_VALIDATION', {
            field: 'state',
            reason: 'must be pending, active, rejected or cancelled',
          });
        }
        return services.listSubscriptions(catalog.id, state as never);
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/approve',
      summary: 'Approve a pending subscription',
      tag: 'subscriptions',
      handler: async (request) =>
        services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'approve'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/reject',
      summary: 'Reject a pending subscription',
      tag: 'subscriptions',
      handler: async (request) =>
        services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'reject'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/revoke',
      summary: 'Revoke (cancel) a subscription',
      tag: 'subscriptions',
      status: 204,
      handler: async (request) => {
        await services.revokeSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'));
        return null;
      },
    },
    // ── provider users ──
    {
      method: 'GET',
      url: '/api/users',
      summary: 'List provider users',
      tag: 'users',
      handler: async (request) => {
        return (await services.listProviderUsers(orgId(request))).map((u) => ({
          username: u.username,
          email: u.email,
          createdAt: u.created_at,
        }));
      },
    },
    {
      method: 'POST',
      url: '/api/users',
      summary: 'Add a provider user',
      tag: 'users',
      status: 201,
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: {
          username: stringField('User name'),
          email: stringField('Email'),
          password: stringField('Password'),
        },
      },
      handler: async (request) => {
        const body = request.body as { username: string; email?: string; password: string };
        const user = await services.addProviderUser(orgId(request), {
          username: body.username,
          email: body.email ?? '',
          password: body.password,
        });
        return { username: user.username, email: user.email };
      },
    },
    // ── analytics ──
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/analytics/events',
      summary: 'The latest activity events (`?api=&limit=`)',
      tag: 'analytics',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        const orgRow = await services.org(orgId(request));
        const query = request.query as { api?: string; limit?: string };
        const limit = Math.min(1000, Math.max(1, Number(query.limit ?? 100) || 100));
        return services.events({ orgName: orgRow?.name, catalogName: catalog.name, apiName: query.api }, limit);
      },
    },
  ];
}
