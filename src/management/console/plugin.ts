/**
 * The provider console, mounted on the management server under `/console`: provider sign-in
 * with its own cookie session (kind `provider`) and CSRF tokens, then APIs, products, the
 * approval task list, consumer organizations, analytics and the org's provider users.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyFormbody from '@fastify/formbody';
import { PorticoError } from '../../errors.ts';
import { csrfField, notice } from '../../web/components.ts';
import { formField, localPath, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import { registerStaticFiles } from '../../web/static-files.ts';
import {
  csrfTokenMatches,
  endWebSession,
  isStateChanging,
  loadWebSession,
  presentedCsrfToken,
  startWebSession,
} from '../../web/web-session.ts';
import type { WebSessionOptions } from '../../web/web-session.ts';
import type { ProviderServices } from '../../services/provider-services.ts';
import { requirePermission } from '../../services/provider/roles.ts';
import { registerAnalyticsPages } from './analytics-page.ts';
import { registerApiPages } from './apis-page.ts';
import { registerApprovalsPage } from './approvals-page.ts';
import { registerConsumersPage } from './consumers-page.ts';
import { registerOverviewPage } from './overview-page.ts';
import { registerProductsPage } from './products-page.ts';
import { consoleContext, setConsoleContext, viewOf } from './context.ts';
import type { ConsoleContext } from './context.ts';
import { sendConsoleError, sendConsolePage } from './layout.ts';
import { registerUserRegistriesPage } from './user-registries-page.ts';
import { registerOAuthProvidersPage } from './oauth-providers-page.ts';
import { registerUsersPage } from './users-page.ts';

export interface ConsoleOptions {
  services: ProviderServices;
  sessionTtlMs: number;
  /** A session without a request for this long ends (default 60 minutes). */
  sessionIdleMs?: number;
}

/** What the console's page modules are given. */
export interface ConsoleDeps {
  services: ProviderServices;
  sessions: WebSessionOptions;
}

function signInPage(context: ConsoleContext, values: { username?: string; next?: string; error?: string }) {
  return html`<h1>Sign in to the provider console</h1>
    <p class="lede">Use your API provider account (the management user registry, not a developer portal account).</p>
    ${values.error ? notice('error', values.error) : ''}
    <form method="post" action="/console/sign-in" class="stack">
      ${csrfField(context.csrfToken)}<input type="hidden" name="next" value="${values.next ?? '/console'}" />
      <div class="field">
        <label for="username">Username</label
        ><input
          type="text"
          id="username"
          name="username"
          value="${values.username ?? ''}"
          autocomplete="username"
          required
        />
      </div>
      <div class="field">
        <label for="password">Password</label
        ><input type="password" id="password" name="password" autocomplete="current-password" required />
      </div>
      <div class="actions"><button type="submit" class="button">Sign in</button></div>
    </form>`;
}

async function buildContext(request: FastifyRequest, reply: FastifyReply, deps: ConsoleDeps): Promise<ConsoleContext> {
  const { services } = deps;
  const state = await loadWebSession(request, reply, deps.sessions);
  const user = state.session ? await services.providerUser(state.session.user_id) : undefined;
  if (!user) return { csrfToken: state.csrfToken, catalogs: [], pendingCount: 0 };
  // Who the audit line of a console change names (server.ts).
  request.providerUser = user;
  const org = await services.org(user.org_id);
  const catalogs = await services.listCatalogs(user.org_id);
  const wanted =
    queryField(request, 'catalog') || (request.params as { catalog?: string } | undefined)?.catalog || 'sandbox';
  const catalog = catalogs.find((c) => c.name === wanted) ?? catalogs[0];
  const pendingCount = catalog ? (await services.listSubscriptions(catalog.id, 'pending')).length : 0;
  return { csrfToken: state.csrfToken, user, org, catalogs, catalog, pendingCount };
}

/**
 * Why the signed-in user may not use this route, or undefined when it may: the same role table
 * as the REST API (src/services/provider/roles.ts). A form post that names no permission is
 * refused (fail closed), so a new action cannot slip in without one.
 */
function permissionRefusal(request: FastifyRequest, context: ConsoleContext): string | undefined {
  const permission = request.routeOptions.config.permission;
  if (permission === undefined)
    return isStateChanging(request.method) ? 'This console action declares no permission.' : undefined;
  if (permission === 'public' || permission === 'signed-in' || !context.user) return undefined;
  try {
    requirePermission(context.user, permission);
    return undefined;
  } catch (error) {
    return `${(error as PorticoError).message}.`;
  }
}

/** The console's routes, registered under the `/console` prefix (paths below are relative to it). */
async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const deps: ConsoleDeps = {
    services: options.services,
    sessions: {
      store: options.services.sessions,
      kind: 'provider',
      cookieName: 'portico_console',
      cookiePath: '/console',
      ttlMs: options.sessionTtlMs,
      idleMs: options.sessionIdleMs,
    },
  };
  await app.register(fastifyFormbody);

  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url?.startsWith('/console/static/')) return;
    const context = await buildContext(request, reply, deps);
    setConsoleContext(request, context);
    if (isStateChanging(request.method) && !csrfTokenMatches(presentedCsrfToken(request), context.csrfToken)) {
      return sendConsoleError(
        reply,
        viewOf(context),
        403,
        'Request refused',
        `${new PorticoError('MGMT_CSRF').message}. Reload the page and try again.`,
      );
    }
    const open = request.routeOptions.url === '/console/sign-in';
    if (!open && !context.user) return reply.redirect(`/console/sign-in?next=${encodeURIComponent(request.url)}`, 303);
    if (!open && !context.catalog)
      return sendConsoleError(
        reply,
        viewOf(context),
        404,
        'No catalog',
        'Your organization has no catalog yet; create one with the CLI or the REST API.',
      );
    const refusal = permissionRefusal(request, context);
    if (refusal) return sendConsoleError(reply, viewOf(context), 403, 'Not allowed', refusal);
  });

  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const view = viewOf(consoleContext(request));
    if (error instanceof PorticoError && error.code === 'MGMT_NOT_FOUND')
      return sendConsoleError(reply, view, 404, 'Not found', error.message);
    if (error instanceof PorticoError && error.status < 500)
      return sendConsoleError(reply, view, error.status, 'Request refused', error.message);
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)
      return sendConsoleError(reply, view, error.statusCode, 'Bad request', error.message);
    request.log.error({ err: error }, 'console request failed');
    return sendConsoleError(
      reply,
      view,
      500,
      'Something went wrong',
      'The console could not complete this request; see the server log.',
    );
  });
  app.setNotFoundHandler((request, reply) =>
    sendConsoleError(
      reply,
      viewOf(consoleContext(request)),
      404,
      'Not found',
      'There is no console page at this address.',
    ),
  );

  registerStaticFiles(app, '/static');

  app.get('/sign-in', async (request, reply) => {
    const context = consoleContext(request);
    const next = localPath(queryField(request, 'next'), '/console');
    if (context.user) return reply.redirect(next, 303);
    return sendConsolePage(reply, viewOf(context), {
      title: 'Sign in',
      section: 'sign-in',
      main: signInPage(context, { next }),
    });
  });

  app.post('/sign-in', { config: { permission: 'public' } }, async (request, reply) => {
    const context = consoleContext(request);
    const username = formField(request, 'username').trim();
    const next = localPath(formField(request, 'next'), '/console');
    try {
      const user = await options.services.authenticateProvider(username, formField(request, 'password'), request.ip);
      await startWebSession(request, reply, deps.sessions, user.id);
      return reply.redirect(next.startsWith('/console') ? next : '/console', 303);
    } catch (error) {
      if (!(error instanceof PorticoError)) throw error;
      if (error.code === 'MGMT_TOO_MANY_ATTEMPTS') {
        reply.header('retry-after', String(error.params.seconds));
        const main = signInPage(context, { username, next, error: error.message });
        const page = { title: 'Too many attempts', status: 429, section: 'sign-in' as const, main };
        return sendConsolePage(reply, viewOf(context), page);
      }
      if (error.code !== 'MGMT_BAD_CREDENTIALS') throw error;
      const main = signInPage(context, { username, next, error: 'Wrong username or password.' });
      return sendConsolePage(reply, viewOf(context), {
        title: 'Sign in',
        status: 401,
        section: 'sign-in',
        main,
      });
    }
  });

  app.post('/sign-out', { config: { permission: 'signed-in' } }, async (request, reply) => {
    await endWebSession(request, reply, deps.sessions);
    return reply.redirect('/console/sign-in', 303);
  });

  registerOverviewPage(app, deps);
  registerApiPages(app, deps);
  registerProductsPage(app, deps);
  registerApprovalsPage(app, deps);
  registerConsumersPage(app, deps);
  registerAnalyticsPages(app, deps);
  registerUserRegistriesPage(app, deps);
  registerOAuthProvidersPage(app, deps);
  registerUsersPage(app, deps);
}

/** The console as a plugin for `createManagementServer({ plugins })`. */
export function createConsolePlugin(options: ConsoleOptions): (app: FastifyInstance) => Promise<void> {
  return async function registerConsole(app: FastifyInstance) {
    await app.register(consoleRoutes, { ...options, prefix: '/console' });
  };
}
