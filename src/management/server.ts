/**
 * The management server (port 8082): the provider REST API under `/api` (JSON, provider
 * sign-in required, its own OpenAPI document at `/api/openapi.json`), `/health` and
 * `/metrics`. Routes are declared in one table that also produces the OpenAPI document, so
 * the two cannot drift apart.
 */
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import type { Logger } from 'pino';
import { register as metricsRegistry } from 'prom-client';
import { PorticoError } from '../errors.ts';
import type { ProviderUser, Session } from '../store/schema.ts';
import { hashToken, secretMatches } from '../store/secrets.ts';
import { pingStore } from '../store/store.ts';
import type { ProviderServices } from '../services/provider-services.ts';
import { requirePermission } from '../services/provider/roles.ts';
import { bearer, openApiDocument } from './route-spec.ts';
import type { RoutePermission } from './route-spec.ts';
import { routes } from './routes.ts';
import { refuseNul } from '../web/nul-guard.ts';
import { isStateChanging } from '../web/web-session.ts';

export interface ManagementOptions {
  services: ProviderServices;
  logger: Logger;
  sessionTtlMs: number;
  /** The longest lifetime a sign-in may ask for its token, in days (default 90). */
  apiTokenMaxDays?: number;
  /** Extra routes (the console) registered on the same server. */
  plugins?: Array<(app: FastifyInstance) => Promise<void> | void>;
  /**
   * Take the client address from `X-Forwarded-For` (a reverse proxy in front): sign-in limits
   * count per client address, and behind a proxy every caller would otherwise share its address.
   */
  trustProxy?: boolean;
  /** The bearer token `/metrics` asks for (`PORTICO_METRICS_TOKEN`); unset: `/metrics` is off (404). */
  metricsToken?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    providerUser?: ProviderUser;
    /** The bearer token's session of an API call (not set for console requests). */
    providerSession?: Session;
  }
}

const storeProbeMs = 2000;

/** Whether the store answers a trivial query within a short time. */
async function storeAnswers(services: ProviderServices): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), storeProbeMs)));
  const probe = pingStore(services.store).then(
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
function storeUnreachable(services: ProviderServices): PorticoError {
  return new PorticoError('STORE_UNREACHABLE', {
    url: services.store.dialect,
    reason: 'it does not answer; try again shortly',
  });
}

/**
 * An error no handler expected. The driver's ways of failing when the database goes away are
 * many (refused, reset, terminated, pool timeout); rather than match their messages, a failed
 * request asks the store itself: if it does not answer, the answer is 503, not a defect.
 */
async function unexpectedError(
  services: ProviderServices,
  error: Error,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!(await storeAnswers(services))) {
    request.log.warn({ reason: error.message }, 'management request failed: the store does not answer');
    return reply.status(503).header('retry-after', '5').send(storeUnreachable(services).toJSON());
  }
  request.log.error({ err: error }, 'management request failed');
  return reply.status(500).send(new PorticoError('MGMT_INTERNAL', { reason: 'see the server log' }).toJSON());
}

/**
 * One `management change` line (level info) for every state-changing API or console request,
 * refused ones and sign-ins included: who (user, org, client address), what (method, route,
 * its parameters) and the answer's status. Bodies are left out (passwords, documents), and the
 * lines go to the process log, not the request log, which keeps warnings only.
 */
function auditChanges(app: FastifyInstance, logger: Logger): void {
  const audit = logger.child({ part: 'audit' });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    if (!isStateChanging(request.method) || route === undefined) return;
    if (!route.startsWith('/api/') && !route.startsWith('/console/')) return;
    const user = request.providerUser;
    audit.info(
      {
        user: user?.username ?? null,
        org: user?.org_id ?? null,
        address: request.ip,
        method: request.method,
        route,
        params: request.params,
        status: reply.statusCode,
      },
      'management change',
    );
  });
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
  // Before any handler: PostgreSQL cannot store U+0000 (web/nul-guard.ts).
  app.addHook('preValidation', refuseNul);
  app.addContentTypeParser(
    ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'],
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, { document: body });
    },
  );

  app.setErrorHandler(
    (
      error: Error & {
        code?: string;
        statusCode?: number;
        validation?: unknown[];
        validationContext?: string;
      },
      request,
      reply,
    ) => {
      if (error instanceof PorticoError) {
        // RFC 6585 §4: a 429 says how long to wait.
        if (error.code === 'MGMT_TOO_MANY_ATTEMPTS') reply.header('retry-after', String(error.params.seconds));
        return reply.status(error.status).send(error.toJSON());
      }
      if (error.validation) {
        const first = error.validation[0] as {
          keyword?: string;
          instancePath?: string;
          params?: { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
          message?: string;
        };
        const field =
          first.params?.missingProperty ??
          first.params?.additionalProperty ??
          (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.') ??
          'body';
        const allowed = first.keyword === 'enum' ? first.params?.allowedValues : undefined;
        const reason = first.params?.additionalProperty
          ? 'is not a known field'
          : allowed
            ? `must be one of: ${allowed.join(', ')}`
            : (first.message ?? 'is invalid');
        return reply.status(400).send(new PorticoError('MGMT_VALIDATION', { field: field || 'body', reason }).toJSON());
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return reply.status(413).send(new PorticoError('MGMT_PAYLOAD_TOO_LARGE', { limit: 10 * 1024 * 1024 }).toJSON());
      if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
        return reply
          .status(error.statusCode)
          .send(
            new PorticoError(
              'MGMT_VALIDATION',
              { field: 'body', reason: error.message },
              { status: error.statusCode },
            ).toJSON(),
          );
      }
      return unexpectedError(services, error, request, reply);
    },
  );
  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(
      new PorticoError('MGMT_NOT_FOUND', {
        kind: 'route',
        id: `${request.method} ${request.url}`,
      }).toJSON(),
    );
  });

  const table = routes(services, { sessionTtlMs: options.sessionTtlMs, maxDays: options.apiTokenMaxDays ?? 90 });
  const document = openApiDocument(table);

  const authenticate = async (request: FastifyRequest) => {
    const token = bearer(request);
    if (!token)
      throw new PorticoError('MGMT_UNAUTHENTICATED', {
        reason: 'send Authorization: Bearer <token> (from POST /api/login)',
      });
    const session = await services.sessions.find(token, ['token']);
    const user = session ? await services.providerUser(session.user_id) : undefined;
    if (!user)
      throw new PorticoError('MGMT_UNAUTHENTICATED', {
        reason: 'the token is unknown or expired; sign in again',
      });
    request.providerUser = user;
    request.providerSession = session;
  };

  // The one place a route's permission is enforced: sign-in, then the role's permission, before
  // the body is read (a refused caller's upload is not parsed, nor validated into a 400).
  const authorize = (permission: Exclude<RoutePermission, 'public'>) =>
    async function authorizeRoute(request: FastifyRequest) {
      await authenticate(request);
      if (permission !== 'signed-in') requirePermission(request.providerUser!, permission);
    };

  for (const route of table) {
    app.route({
      method: route.method,
      url: route.url,
      ...(route.body ? { schema: { body: route.body } } : {}),
      onRequest: route.permission === 'public' ? undefined : authorize(route.permission),
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
  // The management port is where providers sign in, often reachable beyond the operator's
  // network, and its process's metrics hold every API's traffic by name when it also runs a
  // gateway: only the operator's token reads them (a review found them open to anyone).
  const metricsTokenHash = options.metricsToken === undefined ? undefined : hashToken(options.metricsToken);
  app.get('/metrics', async (request, reply) => {
    const authorization = request.headers.authorization;
    const presented = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined;
    if (metricsTokenHash === undefined || presented === undefined || !secretMatches(presented, metricsTokenHash))
      return reply.callNotFound();
    reply.header('content-type', metricsRegistry.contentType);
    return metricsRegistry.metrics();
  });
  for (const plugin of options.plugins ?? []) await plugin(app);
  auditChanges(app, options.logger);
  return app;
}
