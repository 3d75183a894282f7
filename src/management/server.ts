/**
 * The management server (port 8082): the provider REST API under `/api` (JSON, provider
 * sign-in required, its own OpenAPI document at `/api/openapi.json`), `/health` and
 * `/metrics`. Routes are declared in one table that also produces the OpenAPI document, so
 * the two cannot drift apart.
 */
import Fastify from 'fastify';
import { UserRegistries } from '../services/user-registries.ts';
import { userRegistryRoutes } from './user-registry-routes.ts';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import type { Logger } from 'pino';
import { register as metricsRegistry } from 'prom-client';
import { PorticoError } from '../errors.ts';
import type { ProductState } from '../store/schema.ts';
import { createSession, deleteSession, findSession } from '../store/sessions.ts';
import { findOrgById, findProviderUserById, listCatalogs, listProviderUsers } from '../store/orgs.ts';
import { sql } from 'kysely';
import * as consumers from '../store/consumers.ts';
import * as analytics from '../store/analytics.ts';
import { listPlans, listProductApis } from '../store/products.ts';
import type { ProviderUser } from '../store/schema.ts';
import type { NewConsumerOrg, Services } from './services.ts';

export interface ManagementOptions {
  services: Services;
  logger: Logger;
  sessionTtlMs: number;
  /** Extra routes (the console) registered on the same server. */
  plugins?: Array<(app: FastifyInstance) => Promise<void> | void>;
  /**
   * Take the client address from `X-Forwarded-For` (a reverse proxy in front): sign-in limits
   * count per client address, and behind a proxy every caller would otherwise share its address.
   */
  trustProxy?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    providerUser?: ProviderUser;
  }
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** JSON schema of the body (validated by Fastify's ajv). */
  body?: Record<string, unknown>;
  /** Status of a success answer. */
  status?: number;
  public?: boolean;
  handler: Handler;
}

const stringField = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra });

/** Body of an import: the document as text (YAML or JSON) and the file name it came from. */
const documentBody = {
  type: 'object',
  required: ['document'],
  additionalProperties: false,
  properties: {
    document: stringField('The definition document, YAML or JSON text', { minLength: 1 }),
    file: stringField('The file name, used in error messages and to resolve references'),
    attachments: { type: 'object', additionalProperties: { type: 'string' }, description: 'Files the document refers to (WSDL, XSD, API files for product $refs), by name' },
    replace: { type: 'boolean', description: 'Replace an existing API with the same name and version', default: false },
    state: { type: 'string', enum: ['staged', 'published', 'online', 'offline'], description: 'Initial state' },
  },
};

export function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name];
}

export function orgId(request: FastifyRequest): string {
  return request.providerUser!.org_id;
}

/** The API's name and version from the route's `:name/:version`. */
function apiParams(request: FastifyRequest): [string, string] {
  return [param(request, 'name'), param(request, 'version')];
}

function routes(services: Services, sessionTtlMs: number): RouteSpec[] {
  const moveProduct = async (request: FastifyRequest, state: ProductState) =>
    productSummary(await services.setProductState(orgId(request), param(request, 'catalog'), param(request, 'name'), param(request, 'version'), state));

  return [
    ...userRegistryRoutes(new UserRegistries(services)),
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
        const session = await createSession(services.store.db, { kind: 'token', userId: user.id, ttlMs: sessionTtlMs * 90 });
        return { token: session.token, username: user.username, expiresAt: new Date(session.session.expires_at).toISOString() };
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
        if (token) await deleteSession(services.store.db, token);
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
        const org = await findOrgById(services.store.db, user.org_id);
        return { username: user.username, email: user.email, org: org?.name };
      },
    },
    // ── APIs ──
    { method: 'GET', url: '/api/apis', summary: 'List APIs', tag: 'apis', handler: async (request) => (await services.listApis(orgId(request))).map(apiSummary) },
    {
      method: 'POST',
      url: '/api/apis',
      summary: 'Import an API document (created offline)',
      tag: 'apis',
      status: 201,
      body: documentBody,
      handler: async (request, reply) => {
        const body = request.body as { document: string; file?: string; attachments?: Record<string, string>; replace?: boolean; state?: string };
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
        const body = request.body as { document: string; file?: string; attachments?: Record<string, string> };
        const result = await services.addWsdlTarget(orgId(request), ...apiParams(request), { text: body.document, file: body.file ?? 'service.wsdl', attachments: body.attachments });
        return { ...apiSummary(result.api), target: result.service };
      },
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/activate',
      summary: 'Bring an API online',
      tag: 'apis',
      handler: async (request) => apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'online')),
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/deactivate',
      summary: 'Take an API offline',
      tag: 'apis',
      handler: async (request) => apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'offline')),
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
        return (await listCatalogs(services.store.db, orgId(request))).map((c) => ({ name: c.name, title: c.title }));
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
        properties: { name: stringField('Catalog name, used in gateway URLs'), title: stringField('Display title') },
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
      handler: async (request) => (await services.listProducts(orgId(request), param(request, 'catalog'))).map(productSummary),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products',
      summary: 'Create or update a product from its YAML; `state: published` publishes it',
      tag: 'products',
      status: 201,
      body: documentBody,
      handler: async (request, reply) => {
        const body = request.body as { document: string; file?: string; state?: string; attachments?: Record<string, string> };
        const state = body.state === 'staged' || body.state === 'published' ? body.state : undefined;
        const result = await services.putProduct(orgId(request), param(request, 'catalog'), { text: body.document, file: body.file ?? 'product', state, attachments: body.attachments });
        if (!result.created) reply.status(200);
        return { ...productSummary(result.product), created: result.created, changed: result.changed };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/products/:name/:version',
      summary: 'Get a product with its plans and APIs',
      tag: 'products',
      handler: async (request) => {
        const product = await services.product(orgId(request), param(request, 'catalog'), param(request, 'name'), param(request, 'version'));
        const plans = await listPlans(services.store.db, product.id);
        const apis = await listProductApis(services.store.db, product.id);
        return {
          ...productSummary(product),
          document: JSON.parse(product.document),
          plans: plans.map((p) => ({ name: p.name, title: p.title, description: p.description, approval: p.approval === 1, rateLimits: JSON.parse(p.rate_limits), burstLimits: JSON.parse(p.burst_limits) })),
          apis: apis.map((a) => ({ key: a.api_key, name: a.name, version: a.version, title: a.title, state: a.state, basePath: a.base_path })),
        };
      },
    },
    { method: 'POST', url: '/api/catalogs/:catalog/products/:name/:version/publish', summary: 'Publish a product', tag: 'products', handler: (r) => moveProduct(r, 'published') },
    { method: 'POST', url: '/api/catalogs/:catalog/products/:name/:version/deprecate', summary: 'Deprecate a product (existing subscribers only)', tag: 'products', handler: (r) => moveProduct(r, 'deprecated') },
    { method: 'POST', url: '/api/catalogs/:catalog/products/:name/:version/retire', summary: 'Retire a product (ends its subscriptions)', tag: 'products', handler: (r) => moveProduct(r, 'retired') },
    { method: 'POST', url: '/api/catalogs/:catalog/products/:name/:version/archive', summary: 'Archive a retired product', tag: 'products', handler: (r) => moveProduct(r, 'archived') },
    { method: 'POST', url: '/api/catalogs/:catalog/products/:name/:version/stage', summary: 'Stage a product (back from retired, or a staged product again)', tag: 'products', handler: (r) => moveProduct(r, 'staged') },
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
          throw new PorticoError('MGMT_VALIDATION', { field: 'state', reason: 'must be pending, active, rejected or cancelled' });
        }
        return consumers.listSubscriptionDetails(services.store.db, { catalogId: catalog.id, state: state as never });
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/approve',
      summary: 'Approve a pending subscription',
      tag: 'subscriptions',
      handler: async (request) => services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'approve'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/reject',
      summary: 'Reject a pending subscription',
      tag: 'subscriptions',
      handler: async (request) => services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'reject'),
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
    // ── consumer organizations and apps ──
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/consumer-orgs',
      summary: 'List consumer organizations',
      tag: 'consumers',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        return (await consumers.listConsumerOrgs(services.store.db, catalog.id)).map((o) => ({ id: o.id, name: o.name, title: o.title, createdAt: o.created_at }));
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/consumer-orgs',
      summary: 'Create a consumer organization with a chosen name (the one a custom visibility lists) and its owner',
      tag: 'consumers',
      status: 201,
      body: {
        type: 'object',
        required: ['name', 'owner'],
        additionalProperties: false,
        properties: {
          name: stringField('Organization name, as products list it in custom visibility'),
          title: stringField('Display title'),
          owner: {
            type: 'object',
            required: ['email', 'password'],
            additionalProperties: false,
            description: 'The portal user who owns the organization and signs in with this email',
            properties: {
              email: stringField('Email'),
              password: stringField('Initial password'),
              name: stringField('Name'),
            },
          },
        },
      },
      handler: async (request) => {
        const body = request.body as NewConsumerOrg;
        const { org, user } = await services.createConsumerOrg(orgId(request), param(request, 'catalog'), body);
        return { id: org.id, name: org.name, title: org.title, owner: { email: user.email, name: user.name } };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/apps',
      summary: 'List applications with their consumer organization',
      tag: 'consumers',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        return consumers.listAppsInCatalog(services.store.db, catalog.id);
      },
    },
    // ── provider users ──
    {
      method: 'GET',
      url: '/api/users',
      summary: 'List provider users',
      tag: 'users',
      handler: async (request) => {
        return (await listProviderUsers(services.store.db, orgId(request))).map((u) => ({ username: u.username, email: u.email, createdAt: u.created_at }));
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
        properties: { username: stringField('User name'), email: stringField('Email'), password: stringField('Password') },
      },
      handler: async (request) => {
        const body = request.body as { username: string; email?: string; password: string };
        const user = await services.addProviderUser(orgId(request), { username: body.username, email: body.email ?? '', password: body.password });
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
        const orgRow = await findOrgById(services.store.db, orgId(request));
        const query = request.query as { api?: string; limit?: string };
        const limit = Math.min(1000, Math.max(1, Number(query.limit ?? 100) || 100));
        return analytics.listEvents(services.store.db, { orgName: orgRow?.name, catalogName: catalog.name, apiName: query.api }, limit);
      },
    },
  ];
}

function apiSummary(api: { name: string; version: string; title: string; state: string; base_path: string; created_at: string; updated_at: string }) {
  return { name: api.name, version: api.version, title: api.title, state: api.state, basePath: api.base_path, createdAt: api.created_at, updatedAt: api.updated_at };
}

function productSummary(product: { id: string; name: string; version: string; title: string; state: string; view_type: string; subscribe_type: string; updated_at: string }) {
  return {
    id: product.id,
    name: product.name,
    version: product.version,
    title: product.title,
    state: product.state,
    visibility: { view: product.view_type, subscribe: product.subscribe_type },
    updatedAt: product.updated_at,
  };
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.startsWith('Bearer ')) return header.slice(7).trim();
  return undefined;
}

/** The OpenAPI 3.1 document of the management API, from the route table. */
function openApiDocument(table: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of table) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const parameters = [...route.url.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } } : {}),
      ...(route.public ? { security: [] } : {}),
      responses: {
        [String(route.status ?? 200)]: { description: 'Success' },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Portico management API', version: '1.0.0', description: 'Provider API: APIs, products, catalogs, subscriptions, users.' },
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Token from POST /api/login' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, field: { type: 'string' }, file: { type: 'string' }, path: { type: 'string' }, rule: { type: 'string' } },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
  };
}

const storeProbeMs = 2000;

/** Whether the store answers a trivial query within a short time. */
async function storeAnswers(services: Services): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), storeProbeMs)));
  const probe = sql`select 1`.execute(services.store.db).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database's kind only: the caller may be anyone, the host and user are not theirs to know. */
function storeUnreachable(services: Services): PorticoError {
  return new PorticoError('STORE_UNREACHABLE', { url: services.store.dialect, reason: 'it does not answer; try again shortly' });
}

/**
 * An error no handler expected. The driver's ways of failing when the database goes away are
 * many (refused, reset, terminated, pool timeout); rather than match their messages, a failed
 * request asks the store itself: if it does not answer, the answer is 503, not a defect.
 */
async function unexpectedError(services: Services, error: Error, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!(await storeAnswers(services))) {
    request.log.warn({ reason: error.message }, 'management request failed: the store does not answer');
    return reply.status(503).header('retry-after', '5').send(storeUnreachable(services).toJSON());
  }
  request.log.error({ err: error }, 'management request failed');
  return reply.status(500).send(new PorticoError('MGMT_INTERNAL', { reason: 'see the server log' }).toJSON());
}

/** Builds the management server (not yet listening). */
export async function createManagementServer(options: ManagementOptions): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify({
    // Per-request lines are Fastify's at info level: the management log keeps warnings and errors.
    loggerInstance: options.logger.child({ part: 'management' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit: 10 * 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
    ajv: { customOptions: { allErrors: false, removeAdditional: false, coerceTypes: false } },
  });
  await app.register(fastifyCookie);
  app.addContentTypeParser(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'], { parseAs: 'string' }, (_request, body, done) => {
    done(null, { document: body });
  });

  app.setErrorHandler((error: Error & { code?: string; statusCode?: number; validation?: unknown[]; validationContext?: string }, request, reply) => {
    if (error instanceof PorticoError) {
      // RFC 6585 §4: a 429 says how long to wait.
      if (error.code === 'MGMT_TOO_MANY_ATTEMPTS') reply.header('retry-after', String(error.params.seconds));
      return reply.status(error.status).send(error.toJSON());
    }
    if (error.validation) {
      const first = error.validation[0] as { instancePath?: string; params?: { missingProperty?: string; additionalProperty?: string }; message?: string };
      const field =
        first.params?.missingProperty ?? first.params?.additionalProperty ?? (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.') ?? 'body';
      const reason = first.params?.additionalProperty ? 'is not a known field' : (first.message ?? 'is invalid');
      return reply.status(400).send(new PorticoError('MGMT_VALIDATION', { field: field || 'body', reason }).toJSON());
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send(new PorticoError('MGMT_PAYLOAD_TOO_LARGE', { limit: 10 * 1024 * 1024 }).toJSON());
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(error.statusCode).send(new PorticoError('MGMT_VALIDATION', { field: 'body', reason: error.message }, { status: error.statusCode }).toJSON());
    }
    return unexpectedError(services, error, request, reply);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(new PorticoError('MGMT_NOT_FOUND', { kind: 'route', id: `${request.method} ${request.url}` }).toJSON());
  });

  const table = routes(services, options.sessionTtlMs);
  const document = openApiDocument(table);

  const authenticate = async (request: FastifyRequest) => {
    const token = bearer(request);
    if (!token) throw new PorticoError('MGMT_UNAUTHENTICATED', { reason: 'send Authorization: Bearer <token> (from POST /api/login)' });
    const session = await findSession(services.store.db, token, ['token']);
    const user = session ? await findProviderUserById(services.store.db, session.user_id) : undefined;
    if (!user) throw new PorticoError('MGMT_UNAUTHENTICATED', { reason: 'the token is unknown or expired; sign in again' });
    request.providerUser = user;
  };

  for (const route of table) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.body ? { schema: { body: route.body } } : {}),
      preHandler: route.public ? undefined : authenticate,
      handler: async (request, reply) => {
        // The route's success status first; a handler may still choose another (200 for "unchanged").
        if (route.status) reply.status(route.status);
        const result = await route.handler(request, reply);
        if (result === null) return reply.send();
        return result;
      },
    });
  }

  app.get('/api/openapi.json', async () => document);
  // Liveness: the process answers, whatever its dependencies do (restarting it would not help).
  app.get('/health', async () => ({ status: 'ok' }));
  // Readiness: the store answers, so the API can do its work.
  app.get('/ready', async () => {
    if (!(await storeAnswers(services))) throw storeUnreachable(services);
    return { status: 'ready' };
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metricsRegistry.contentType);
    return metricsRegistry.metrics();
  });
  for (const plugin of options.plugins ?? []) await plugin(app);
  return app;
}
