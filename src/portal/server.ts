/**
 * The developer portal (port 8081): server-rendered pages for one catalog — accounts, API
 * products, apps, the subscribe wizard, API pages with Try it. Every page is HTML built with
 * the escaping `html` helper and sent with a strict Content-Security-Policy; every
 * state-changing request must carry the session's CSRF token.
 */
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import type { Logger } from 'pino';
import { PorticoError } from '../errors.ts';
import type { ConsumerServices } from '../services/consumer-services.ts';
import { catalogResolver, portalContext, setContext } from './context.ts';
import type { PortalContext } from './context.ts';
import type { PortalDeps } from './deps.ts';
import { sendPortalError } from './layout.ts';
import { registerStaticFiles } from '../web/static-files.ts';
import { csrfTokenMatches, isStateChanging, loadWebSession, presentedCsrfToken } from '../web/web-session.ts';
import { registerAccountEmailRoutes } from './routes/account-email.ts';
import { registerAccountRoutes } from './routes/accounts.ts';
import { registerApiRoutes } from './routes/apis.ts';
import { registerOAuthCodeRoutes } from './routes/oauth-code.ts';
import { registerAppRoutes } from './routes/apps.ts';
import { registerProductRoutes } from './routes/products.ts';
import { registerSearchRoutes } from './routes/search.ts';
import { registerSubscribeRoutes } from './routes/subscribe.ts';
import { refuseNul } from '../web/nul-guard.ts';

export interface PortalOptions {
  services: ConsumerServices;
  logger: Logger;
  sessionTtlMs: number;
  /** A session without a request for this long ends (default 60 minutes). */
  sessionIdleMs?: number;
  /** Where Try it calls go: the gateway as this process reaches it. */
  gatewayUrl: string;
  /** The gateway address shown to developers (defaults to `gatewayUrl`). */
  gatewayPublicUrl?: string;
  /** `org/catalog` (PORTICO_PORTAL_CATALOG); default: the first provider org's `sandbox`. */
  catalog?: string;
  /** Trust X-Forwarded-* from a reverse proxy (for the client address and https detection). */
  trustProxy?: boolean;
  /** Try it time limit; default 15 s. */
  tryTimeoutMs?: number;
}

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('application/json');
}

/** Sends an error as a page (or as JSON to the Try it script). */
function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  context: PortalContext | undefined,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  if (wantsJson(request))
    return reply
      .status(status)
      .send({ status: 0, statusText: '', headers: [], body: '', timeMs: 0, error: `${title}: ${message}` });
  return sendPortalError(reply, context, status, title, message);
}

function contextOf(request: FastifyRequest): PortalContext | undefined {
  try {
    return portalContext(request);
  } catch {
    return undefined;
  }
}

/** Builds the portal server (not yet listening). */
export async function createPortalServer(options: PortalOptions): Promise<FastifyInstance> {
  const { services } = options;
  const app = Fastify({
    // Per-request lines are Fastify's at info level: the portal log keeps warnings and errors.
    loggerInstance: options.logger.child({ part: 'portal' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: options.trustProxy ?? false,
  });
  await app.register(fastifyCookie);
  // Before any handler: PostgreSQL cannot store U+0000 (web/nul-guard.ts).
  app.addHook('preValidation', refuseNul);
  await app.register(fastifyFormbody);

  const deps: PortalDeps = {
    services,
    sessions: {
      store: services.sessions,
      kind: 'portal',
      cookieName: 'portico_portal',
      cookiePath: '/',
      ttlMs: options.sessionTtlMs,
      idleMs: options.sessionIdleMs,
    },
    gatewayUrl: options.gatewayUrl,
    gatewayPublicUrl: options.gatewayPublicUrl ?? options.gatewayUrl,
    tryTimeoutMs: options.tryTimeoutMs ?? 15_000,
    portalPublicUrl: () => services.mail.portalUrl().replace(/\/$/, ''),
  };
  const resolveCatalog = catalogResolver(services, options.catalog);

  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url?.startsWith('/static/')) return;
    const catalog = await resolveCatalog();
    if (!catalog) {
      return sendError(
        request,
        reply,
        undefined,
        503,
        'Portal not ready',
        `The catalog ${options.catalog ?? 'sandbox'} this portal serves does not exist yet.`,
      );
    }
    const state = await loadWebSession(request, reply, deps.sessions);
    const user = state.session ? await services.portalUser(state.session.user_id) : undefined;
    const org =
      user && user.catalog_id === catalog.catalogId ? await services.consumerOrg(user.consumer_org_id) : undefined;
    const signedInParts = user && org ? { session: state.session, user, org } : {};
    const mailConfigured = services.mailConfigured;
    const context: PortalContext = { catalog, csrfToken: state.csrfToken, mailConfigured, ...signedInParts };
    setContext(request, context);
    if (isStateChanging(request.method) && !csrfTokenMatches(presentedCsrfToken(request), state.csrfToken)) {
      return sendError(
        request,
        reply,
        context,
        403,
        'Request refused',
        new PorticoError('MGMT_CSRF').message + '. Reload the page and try again.',
      );
    }
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const context = contextOf(request);
    if (error instanceof PorticoError) {
      if (error.code === 'MGMT_NOT_FOUND')
        return sendError(
          request,
          reply,
          context,
          404,
          'Not found',
          'There is nothing here, or it is not yours to see.',
        );
      if (error.status < 500) return sendError(request, reply, context, error.status, 'Request refused', error.message);
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return sendError(request, reply, context, error.statusCode, 'Bad request', error.message);
    request.log.error({ err: error }, 'portal request failed');
    return sendError(
      request,
      reply,
      context,
      500,
      'Something went wrong',
      'The portal could not complete this request. Try again in a moment.',
    );
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, contextOf(request), 404, 'Not found', 'There is no page at this address.'),
  );

  registerStaticFiles(app, '/static');
  registerAccountRoutes(app, deps);
  registerAccountEmailRoutes(app, deps);
  registerProductRoutes(app, deps);
  registerAppRoutes(app, deps);
  registerSubscribeRoutes(app, deps);
  registerApiRoutes(app, deps);
  registerOAuthCodeRoutes(app, deps);
  registerSearchRoutes(app, deps);
  return app;
}
