/**
 * The subscribe wizard (API Connect's flow): Subscribe under a plan → select an app, or create
 * one inside the wizard → review (Next) → summary (Done). Plans that need approval start
 * "Pending approval" until the provider decides in the console's task list. An app created in
 * the wizard leaves the product, plan and app in the server-side session, and its secret as a
 * flash, so the review page continues where the developer was and a reload repeats nothing.
 */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import type { App, PlanRow, ProductRow } from '../../store/schema.ts';
import { breadcrumbs, csrfField, notice, statePill } from '../../web/components.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { formErrorMessage, formField, queryField } from '../../web/form.ts';
import { html, path } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import { sendPortalPage } from '../layout.ts';
import { approvalInWords, planLimitsInWords } from '../../web/plan-words.ts';
import { redirectToSignIn } from './accounts.ts';
import { productUrl } from './products.ts';
import { appFields, secretPanel } from '../app-page.ts';
import { flashSecret, forgetWizard, rememberWizard, takeSecret, wizardPlace } from '../session-values.ts';
import type { SecretFlash } from '../session-values.ts';
import { usageSection } from '../usage-view.ts';

const steps = ['Select app', 'Review', 'Summary'];

function wizardSteps(current: number): SafeHtml {
  return html`<ol class="wizard" aria-label="Subscription steps">
    ${steps.map((label, i) => html`<li${i === current ? html` aria-current="step"` : ''}>${i + 1}. ${label}</li>`)}
  </ol>`;
}

function planFacts(product: ProductRow, plan: PlanRow, app?: App): SafeHtml {
  const limits = planLimitsInWords(plan);
  return html`<dl class="facts">
    <dt>Product</dt>
    <dd>${product.title} ${product.version}</dd>
    <dt>Plan</dt>
    <dd>${plan.title}</dd>
    <dt>Rate limit</dt>
    <dd>${limits.rate.join(', ')}${limits.burst.length > 0 ? html` (burst: ${limits.burst.join(', ')})` : ''}</dd>
    <dt>Approval</dt>
    <dd>${approvalInWords(plan)}</dd>
    ${
      app
        ? html`<dt>Application</dt>
            <dd>${app.title}</dd>`
        : ''
    }
  </dl>`;
}

interface NewAppValues {
  title?: string;
  description?: string;
  error?: string;
}

/** The wizard's own "create an app" form: the app is created and the wizard goes on to the review. */
function wizardAppForm(context: PortalContext, product: ProductRow, plan: PlanRow, values: NewAppValues): SafeHtml {
  return html`<form
    method="post"
    action="${productUrl(product)}/subscribe/app"
    class="stack"
    aria-labelledby="new-app-title"
  >
    ${csrfField(context.csrfToken)}
    <h2 id="new-app-title">Create an app</h2>
    <p>The app receives a client id and secret; after creating it you review the subscription to ${plan.title}.</p>
    ${values.error ? notice('error', values.error) : ''}
    <input type="hidden" name="plan" value="${plan.name}" />
    ${appFields(values)}
    <div class="actions"><button type="submit" class="button">Create app and continue</button></div>
  </form>`;
}

function wizardAppPage(context: PortalContext, product: ProductRow, plan: PlanRow, values: NewAppValues): SafeHtml {
  return html`${breadcrumbs([['API Products', '/products'], [`${product.title} ${product.version}`, productUrl(product)], ['Subscribe']])}
    <h1>Subscribe to ${product.title}: ${plan.title}</h1>
    ${wizardSteps(0)} ${wizardAppForm(context, product, plan, values)}
    <p>
      <a href="${productUrl(product)}/subscribe?plan=${encodeURIComponent(plan.name)}">Back to the app list</a>
    </p>`;
}

async function planOf(deps: PortalDeps, product: ProductRow, name: string): Promise<PlanRow> {
  const plan = (await deps.services.productPlans(product.id)).find((p) => p.name === name);
  if (!plan) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'plan', id: name });
  return plan;
}

function reviewPage(
  context: PortalContext,
  product: ProductRow,
  plan: PlanRow,
  app: App,
  error?: string,
  flash?: SecretFlash,
): SafeHtml {
  return html`${breadcrumbs([['API Products', '/products'], [`${product.title} ${product.version}`, productUrl(product)], ['Subscribe']])}
    <h1>Review the subscription</h1>
    ${wizardSteps(1)} ${error ? notice('error', error) : ''}
    ${flash ? html`${notice('ok', html`App <strong>${app.title}</strong> created.`)}${secretPanel(flash)}` : ''}
    ${planFacts(product, plan, app)}
    ${plan.approval === 1 ? notice('info', 'The API provider approves this plan. Until then the subscription shows as Pending approval.') : ''}
    <form method="post" action="${productUrl(product)}/subscribe">
      ${csrfField(context.csrfToken)} <input type="hidden" name="plan" value="${plan.name}" /><input
        type="hidden"
        name="app"
        value="${app.id}"
      />
      <div class="actions">
        <button type="submit" class="button">Next</button>
        <a class="button secondary" href="${productUrl(product)}/subscribe?plan=${encodeURIComponent(plan.name)}"
          >Back</a
        >
      </div>
    </form>`;
}

/** Registers the wizard's pages and the subscription summary. */
export function registerSubscribeRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;

  app.get('/products/:name/:version/subscribe', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    const plan = await planOf(deps, product, queryField(request, 'plan'));
    const apps = await services.listApps(context.org.id);
    const live = (await services.orgSubscriptions(context)).filter(
      (s) => s.product_id === product.id && (s.state === 'active' || s.state === 'pending'),
    );
    const firstFree = apps.findIndex((a) => !live.some((s) => s.app_id === a.id));
    const choices = apps.map((a, i) => {
      const existing = live.find((s) => s.app_id === a.id);
      const state = existing ? html` disabled` : i === firstFree ? html` checked` : '';
      return html`<div class="choice">
        <input type="radio" name="app" id="app-${i}" value="${a.id}" ${state} required />
        <label for="app-${i}"
          >${a.title}${existing ? html` — already subscribed (${existing.plan_title}, ${statePill(existing.state)})` : ''}</label
        >
      </div>`;
    });
    const main = html`${breadcrumbs([['API Products', '/products'], [`${product.title} ${product.version}`, productUrl(product)], ['Subscribe']])}
      <h1>Subscribe to ${product.title}: ${plan.title}</h1>
      ${wizardSteps(0)}
      ${
        apps.length === 0
          ? html`${notice('info', 'You need an app to subscribe: create one here and the subscription continues.')}${wizardAppForm(context, product, plan, {})}`
          : html`<form method="get" action="${productUrl(product)}/subscribe/review" class="stack">
              <input type="hidden" name="plan" value="${plan.name}" />
              <fieldset>
                <legend>Select the application to subscribe</legend>
                ${choices}
              </fieldset>
              <div class="actions">
                <button type="submit" class="button">Select app</button>
                <a href="${productUrl(product)}/subscribe/app?plan=${encodeURIComponent(plan.name)}"
                  >Create another app</a
                >
              </div>
            </form>`
      }`;
    return sendPortalPage(reply, context, {
      title: `Subscribe to ${product.title}`,
      section: 'products',
      main,
    });
  });

  app.get('/products/:name/:version/subscribe/app', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    const plan = await planOf(deps, product, queryField(request, 'plan'));
    return sendPortalPage(reply, context, {
      title: 'Create an app',
      section: 'products',
      main: wizardAppPage(context, product, plan, {}),
    });
  });

  app.post('/products/:name/:version/subscribe/app', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    const plan = await planOf(deps, product, formField(request, 'plan'));
    const values = { title: formField(request, 'title'), description: formField(request, 'description') };
    let created;
    try {
      created = await services.createAppAs(context.user, values);
    } catch (error) {
      const main = wizardAppPage(context, product, plan, { ...values, error: formErrorMessage(error) });
      return sendPortalPage(reply, context, {
        title: 'Create an app',
        section: 'products',
        status: error instanceof PorticoError ? error.status : 400,
        main,
      });
    }
    const flash = {
      appId: created.app.id,
      clientId: created.credential.client_id,
      clientSecret: created.clientSecret,
      heading: 'Your app credentials',
    };
    await flashSecret(deps, context.session, flash);
    await rememberWizard(deps, context.session, {
      productId: product.id,
      planName: plan.name,
      appId: created.app.id,
    });
    return reply.redirect(`${productUrl(product)}/subscribe/review`, 303);
  });

  app.get('/products/:name/:version/subscribe/review', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    // The app chosen in the list comes in the query; an app created in the wizard, from the session.
    const place = queryField(request, 'app') ? undefined : await wizardPlace(deps, context.session, product.id);
    const planName = place?.planName ?? queryField(request, 'plan');
    const appId = place?.appId ?? queryField(request, 'app');
    if (!appId)
      return reply.redirect(
        planName ? `${productUrl(product)}/subscribe?plan=${encodeURIComponent(planName)}` : productUrl(product),
        303,
      );
    const plan = await planOf(deps, product, planName);
    const chosen = await services.app(context.org.id, appId);
    const flash = await takeSecret(deps, request, context.session, chosen.id);
    const main = reviewPage(context, product, plan, chosen, undefined, flash);
    return sendPortalPage(reply, context, { title: 'Review the subscription', section: 'products', main });
  });

  app.post('/products/:name/:version/subscribe', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    const plan = await planOf(deps, product, formField(request, 'plan'));
    const chosen = await services.app(context.org.id, formField(request, 'app'));
    try {
      const input = { appId: chosen.id, productId: product.id, planName: plan.name };
      const subscription = await services.subscribeAs(context.user, input);
      await forgetWizard(deps, context.session);
      return reply.redirect(path('subscriptions', subscription.id), 303);
    } catch (error) {
      const message = formErrorMessage(error);
      const status = error instanceof PorticoError ? error.status : 400;
      return sendPortalPage(reply, context, {
        title: 'Review the subscription',
        section: 'products',
        status,
        main: reviewPage(context, product, plan, chosen, message),
      });
    }
  });

  app.get('/subscriptions/:id', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return redirectToSignIn(request, reply);
    const id = (request.params as { id: string }).id;
    const subscription = (await services.orgSubscriptions(context)).find((s) => s.id === id);
    if (!subscription) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'subscription', id });
    const product = await services
      .visibleProduct(context, subscription.product_name, subscription.product_version)
      .catch(() => undefined);
    const plan = product
      ? (await services.productPlans(product.id)).find((p) => p.id === subscription.plan_id)
      : undefined;
    const stateNote =
      subscription.state === 'pending'
        ? notice(
            'info',
            'Pending approval: the API provider has been asked to approve it. The state changes to Active on the app page once approved.',
          )
        : subscription.state === 'active'
          ? notice('ok', 'Active: the app can call the product’s APIs now.')
          : notice('warn', `This subscription is ${subscription.state}.`);
    const main = html`${breadcrumbs([['Apps', '/apps'], [subscription.app_title, path('apps', subscription.app_id)], ['Subscription']])}
      <h1>Subscription summary</h1>
      ${wizardSteps(2)} ${stateNote}
      <dl class="facts">
        <dt>Application</dt>
        <dd>${subscription.app_title}</dd>
        <dt>Product</dt>
        <dd>${subscription.product_title} ${subscription.product_version}</dd>
        <dt>Plan</dt>
        <dd>${subscription.plan_title}</dd>
        <dt>State</dt>
        <dd>${statePill(subscription.state)}</dd>
        ${
          plan
            ? html`<dt>Rate limit</dt>
                <dd>${planLimitsInWords(plan).rate.join(', ')}</dd>
                <dt>Approval</dt>
                <dd>${approvalInWords(plan)}</dd>`
            : ''
        }
      </dl>
      <p><a class="button" href="${path('apps', subscription.app_id)}">Done</a></p>
      ${plan && subscription.state !== 'pending' ? await usageSection(deps, subscription.id, plan, path('subscriptions', subscription.id), queryField(request, 'range')) : ''}`;
    return sendPortalPage(reply, context, { title: 'Subscription summary', section: 'apps', main });
  });
}
