/**
 * The developer's apps: create (credentials shown once), details with credentials and
 * subscriptions, secret reset, a second credential pair for rotation, delete. Every action
 * answers 303 to a page (Post/Redirect/Get); a secret issued travels in the session, not the URL. Every id is
 * looked up within the visitor's own consumer organization: another org's id is a 404.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { breadcrumbs, buttonForm, notice, statePill, table } from '../../web/components.ts';
import { formErrorMessage, formField } from '../../web/form.ts';
import { html, path } from '../../web/html.ts';
import { appPage, newAppForm, secretPanel } from '../app-page.ts';
import type { SignedInContext } from '../app-page.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { sendPortalPage } from '../layout.ts';
import { flashSecret, takeSecret } from '../session-values.ts';
import type { SecretFlash } from '../session-values.ts';
import { redirectToSignIn } from './accounts.ts';

/**
 * Post/Redirect/Get for an action that issues a secret: the secret goes into the server-side
 * session and the browser to the app's page, which shows it once; a reload repeats nothing.
 */
async function redirectWithSecret(deps: PortalDeps, reply: FastifyReply, context: SignedInContext, flash: SecretFlash) {
  await flashSecret(deps, context.session, flash);
  return reply.redirect(path('apps', flash.appId), 303);
}

/** Registers the app routes. */
export function registerAppRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;

  /** The signed-in context, or undefined after sending the visitor to sign in. */
  const requireUser = (request: Parameters<typeof portalContext>[0]): SignedInContext | undefined => {
    const context = portalContext(request);
    return signedIn(context) ? context : undefined;
  };

  app.get('/apps', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const apps = await services.listApps(context.org.id);
    const subscriptions = await services.orgSubscriptions(context);
    const rows = apps.map((a) => {
      const mine = subscriptions.filter((s) => s.app_id === a.id && s.state !== 'cancelled');
      return [
        html`<a href="${path('apps', a.id)}">${a.title}</a>`,
        a.description,
        mine.length === 0
          ? 'None'
          : html`${mine.map((s) => html`<span>${s.product_title} · ${s.plan_title} ${statePill(s.state)}</span><br />`)}`,
      ];
    });
    const main = html`<h1>Apps</h1>
      <p class="lede">Apps of ${context.org.title}.</p>
      <p><a class="button" href="/apps/new">Create an app</a></p>
      ${apps.length === 0 ? html`<p>No apps yet.</p>` : table('Your apps', ['App', 'Description', 'Subscriptions'], rows, { hideCaption: true })}`;
    return sendPortalPage(reply, context, { title: 'Apps', section: 'apps', main });
  });

  app.get('/apps/new', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    return sendPortalPage(reply, context, {
      title: 'Create an app',
      section: 'apps',
      main: newAppForm(context, {}),
    });
  });

  app.post('/apps', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const values = { title: formField(request, 'title'), description: formField(request, 'description') };
    let created;
    try {
      created = await services.createAppAs(context.user, values);
    } catch (error) {
      return sendPortalPage(reply, context, {
        title: 'Create an app',
        section: 'apps',
        status: error instanceof PorticoError ? error.status : 400,
        main: newAppForm(context, { ...values, error: formErrorMessage(error) }),
      });
    }
    const flash = {
      appId: created.app.id,
      clientId: created.credential.client_id,
      clientSecret: created.clientSecret,
      heading: 'Your app credentials',
    };
    return redirectWithSecret(deps, reply, context, flash);
  });

  app.get('/apps/:id', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const found = await services.app(context.org.id, (request.params as { id: string }).id);
    const flash = await takeSecret(deps, request, context.session, found.id);
    return sendPortalPage(reply, context, {
      title: found.title,
      section: 'apps',
      main: await appPage(deps, context, found, { top: flash ? secretPanel(flash) : '' }),
    });
  });

  app.post('/apps/:id/credentials', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const found = await services.app(context.org.id, (request.params as { id: string }).id);
    let issued;
    try {
      issued = await services.addCredential(context.org.id, found.id, 'Additional credentials');
    } catch (error) {
      // The app page again, saying why (an app at its credential limit).
      return sendPortalPage(reply, context, {
        title: found.title,
        section: 'apps',
        status: (error as PorticoError).status,
        main: await appPage(deps, context, found, { top: notice('error', formErrorMessage(error)) }),
      });
    }
    return redirectWithSecret(deps, reply, context, {
      appId: found.id,
      clientId: issued.credential.client_id,
      clientSecret: issued.clientSecret,
      heading: 'New credentials added',
    });
  });

  app.post('/apps/:id/credentials/:credentialId/reset', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const { id, credentialId } = request.params as { id: string; credentialId: string };
    const found = await services.app(context.org.id, id);
    const reset = await services.resetSecret(context.org.id, found.id, credentialId);
    return redirectWithSecret(deps, reply, context, {
      appId: found.id,
      clientId: reset.clientId,
      clientSecret: reset.clientSecret,
      heading: 'New client secret',
    });
  });

  app.post('/apps/:id/credentials/:credentialId/delete', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const { id, credentialId } = request.params as { id: string; credentialId: string };
    const found = await services.app(context.org.id, id);
    try {
      await services.deleteCredential(context.org.id, found.id, credentialId);
    } catch (error) {
      const extra = notice('error', formErrorMessage(error));
      return sendPortalPage(reply, context, {
        title: found.title,
        section: 'apps',
        status: 409,
        main: await appPage(deps, context, found, { top: extra }),
      });
    }
    return reply.redirect(path('apps', found.id), 303);
  });

  app.post('/apps/:id/redirect-uris', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const found = await services.app(context.org.id, (request.params as { id: string }).id);
    const written = formField(request, 'redirect_uris');
    try {
      await services.setRedirectUris(context.org.id, found.id, written);
    } catch (error) {
      const redirect = { written, error: formErrorMessage(error) };
      return sendPortalPage(reply, context, {
        title: found.title,
        section: 'apps',
        status: 400,
        main: await appPage(deps, context, found, { redirect }),
      });
    }
    return reply.redirect(`${path('apps', found.id)}#redirect-uris`, 303);
  });

  app.get('/apps/:id/delete', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const found = await services.app(context.org.id, (request.params as { id: string }).id);
    const main = html`${breadcrumbs([['Apps', '/apps'], [found.title, path('apps', found.id)], ['Delete']])}
      <h1>Delete ${found.title}?</h1>
      ${notice('warn', 'Its credentials stop working at once and its subscriptions end. This cannot be undone.')}
      <div class="actions">
        ${buttonForm(`${path('apps', found.id)}/delete`, context.csrfToken, 'Delete app', { kind: 'danger' })}<a
          class="button secondary"
          href="${path('apps', found.id)}"
          >Keep the app</a
        >
      </div>`;
    return sendPortalPage(reply, context, { title: `Delete ${found.title}`, section: 'apps', main });
  });

  app.post('/apps/:id/delete', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    await services.deleteApp(context.org.id, (request.params as { id: string }).id);
    return reply.redirect('/apps', 303);
  });

  app.post('/subscriptions/:id/cancel', async (request, reply) => {
    const context = requireUser(request);
    if (!context) return redirectToSignIn(request, reply);
    const id = (request.params as { id: string }).id;
    const subscription = (await services.orgSubscriptions(context)).find((s) => s.id === id);
    if (!subscription) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'subscription', id });
    await services.cancelSubscription(context.org.id, id);
    return reply.redirect(path('apps', subscription.app_id), 303);
  });
}
