/** The developer's app pages: the app with its credentials and subscriptions, the new-app form, a secret shown once. */
import type { App } from '../store/schema.ts';
import type { SubscriptionDetail } from '../services/consumer-services.ts';
import { breadcrumbs, buttonForm, copyField, csrfField, notice, statePill, table, when } from '../web/components.ts';
import { html, path } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import type { PortalContext } from './context.ts';
import type { PortalDeps } from './deps.ts';
import { productUrl } from './routes/products.ts';
import type { SecretFlash } from './session-values.ts';
import { usageInWords } from './usage-view.ts';

/** A portal context with a signed-in user, their consumer org and session. */
export type SignedInContext = PortalContext & Required<Pick<PortalContext, 'user' | 'org' | 'session'>>;

/** The credentials panel shown once after creating an app or resetting a secret. */
function secretOnce(clientId: string, clientSecret: string, heading: string): SafeHtml {
  return html`<section class="notice warn" aria-labelledby="once-title">
    <h2 id="once-title">${heading}</h2>
    <p>
      <strong>Copy the client secret now: it is shown only this once.</strong> Portico keeps only a hash of it; if you
      lose it, reset it on this page to get a new one.
    </p>
    ${copyField('client-id', 'Client ID', clientId)}${copyField('client-secret', 'Client secret', clientSecret)}
  </section>`;
}

/** The once-only panel of a flashed secret. */
export function secretPanel(flash: SecretFlash): SafeHtml {
  return secretOnce(flash.clientId, flash.clientSecret, flash.heading);
}

function subscriptionRows(
  subscriptions: SubscriptionDetail[],
  usage: Map<string, string>,
  context: SignedInContext,
): unknown[][] {
  return subscriptions.map((s) => [
    html`<a href="${productUrl({ name: s.product_name, version: s.product_version })}"
      >${s.product_title} ${s.product_version}</a
    >`,
    s.plan_title,
    statePill(s.state),
    s.state === 'active' ? html`<a href="${path('subscriptions', s.id)}#usage">${usage.get(s.id) ?? ''}</a>` : '—',
    when(s.updated_at),
    s.state === 'active' || s.state === 'pending'
      ? buttonForm(`${path('subscriptions', s.id)}/cancel`, context.csrfToken, 'Cancel subscription', {
          kind: 'secondary',
          small: true,
          confirm: `Cancel the subscription to ${s.product_title} (${s.plan_title})?`,
        })
      : '',
  ]);
}

/** "3 of 100 requests per hour used, 97 left" for each active subscription, by subscription id. */
async function usageByActiveSubscription(
  deps: PortalDeps,
  subscriptions: SubscriptionDetail[],
): Promise<Map<string, string>> {
  const active = subscriptions.filter((s) => s.state === 'active');
  const words = await Promise.all(
    active.map(async (s) => {
      const plan = (await deps.services.productPlans(s.product_id)).find((p) => p.id === s.plan_id);
      return [s.id, plan ? usageInWords(await deps.services.limitUsage(s.id, plan)) : ''] as const;
    }),
  );
  return new Map(words);
}

/** The stored redirect URIs (a JSON list), one per line for the form. */
function redirectUrisOf(app: App): string {
  try {
    const list = JSON.parse(app.redirect_uris) as unknown;
    return Array.isArray(list) ? list.filter((uri) => typeof uri === 'string').join('\n') : '';
  } catch {
    return '';
  }
}

/** The OAuth redirect URIs form; `written` and `error` re-show a refused submission. */
function redirectUrisSection(context: SignedInContext, app: App, written?: string, error?: string): SafeHtml {
  return html`<h2 id="redirect-uris">OAuth redirect URIs</h2>
    <p>
      Where an OAuth provider may send the authorization code after a user signs in and consents. The
      <code>redirect_uri</code> your app sends must equal one of these exactly.
    </p>
    ${error ? notice('error', error) : ''}
    <form method="post" action="${path('apps', app.id)}/redirect-uris" class="stack">
      ${csrfField(context.csrfToken)}
      <div class="field">
        <label for="redirect_uris">Redirect URIs</label
        ><textarea id="redirect_uris" name="redirect_uris" rows="4" maxlength="21000" aria-describedby="redirect-hint">
${written ?? redirectUrisOf(app)}</textarea>
        <p class="hint" id="redirect-hint">
          One absolute URI per line, without a fragment, at most 10; e.g. https://app.example/callback. Empty: none.
        </p>
      </div>
      <div class="actions"><button type="submit" class="button secondary">Save redirect URIs</button></div>
    </form>`;
}

/** What an app page shows besides the app: a notice on top, a refused redirect-URI submission. */
export interface AppPageExtra {
  top?: SafeHtml | '';
  redirect?: { written: string; error: string };
}

/** An app's page: credentials, OAuth redirect URIs, subscriptions with their usage, delete. */
export async function appPage(deps: PortalDeps, context: SignedInContext, app: App, extras: AppPageExtra = {}) {
  const extra = extras.top ?? '';
  const credentials = await deps.services.listCredentials(app.id);
  const subscriptions = (await deps.services.orgSubscriptions(context)).filter((s) => s.app_id === app.id);
  const usage = await usageByActiveSubscription(deps, subscriptions);
  const base = path('apps', app.id);
  const credentialRows = credentials.map((c, i) => [
    html`<code>${c.client_id}</code>`,
    c.description || (i === 0 ? 'Default credentials' : ''),
    when(c.created_at),
    html`<div class="actions">
      ${buttonForm(`${base}/credentials/${encodeURIComponent(c.id)}/reset`, context.csrfToken, 'Reset secret', {
        kind: 'secondary',
        small: true,
        confirm: 'Reset the client secret? Calls with the old secret stop working.',
      })}${credentials.length > 1 ? buttonForm(`${base}/credentials/${encodeURIComponent(c.id)}/delete`, context.csrfToken, 'Delete', { kind: 'danger', small: true, confirm: 'Delete this credential pair?' }) : ''}
    </div>`,
  ]);
  return html`${breadcrumbs([['Apps', '/apps'], [app.title]])}
    <h1>${app.title}</h1>
    ${app.description ? html`<p class="lede">${app.description}</p>` : ''} ${extra}
    <h2>Credentials</h2>
    <p>
      Send the client id in the <code>X-IBM-Client-Id</code> header of every call (and the secret in
      <code>X-IBM-Client-Secret</code> where an API asks for it).
    </p>
    ${table('Credentials of this app', ['Client ID', 'Description', 'Created', 'Actions'], credentialRows, { hideCaption: true })}
    <div class="actions">
      ${buttonForm(`${base}/credentials`, context.csrfToken, 'Add credentials', { kind: 'secondary' })}<span
        class="hint"
        >A second pair lets you rotate credentials without downtime.</span
      >
    </div>
    ${redirectUrisSection(context, app, extras.redirect?.written, extras.redirect?.error)}
    <h2>Subscriptions</h2>
    ${
      subscriptions.length === 0
        ? html`<p>
            This app is not subscribed to any plan yet. <a href="/products">Browse API products</a> and choose Subscribe
            under a plan.
          </p>`
        : table(
            'Subscriptions of this app',
            ['Product', 'Plan', 'State', 'Usage in the current window', 'Updated', ''],
            subscriptionRows(subscriptions, usage, context),
            { hideCaption: true },
          )
    }
    <h2>Delete this app</h2>
    <p>Deleting the app removes its credentials and subscriptions.</p>
    <p><a class="button danger" href="${base}/delete">Delete app…</a></p>`;
}

/** The form that creates an app; `values` re-show a refused submission. */
/** An app's title and description fields: the new-app page and the subscribe wizard. */
export function appFields(values: { title?: string; description?: string }): SafeHtml {
  return html`<div class="field">
      <label for="title">Title</label
      ><input type="text" id="title" name="title" value="${values.title ?? ''}" required maxlength="100" />
    </div>
    <div class="field">
      <label for="description">Description</label
      ><textarea id="description" name="description" maxlength="1000" aria-describedby="description-hint">
${values.description ?? ''}</textarea>
      <p class="hint" id="description-hint">Optional.</p>
    </div>`;
}

export function newAppForm(context: PortalContext, values: { title?: string; description?: string; error?: string }) {
  return html`${breadcrumbs([['Apps', '/apps'], ['Create an app']])}
    <h1>Create an app</h1>
    <p class="lede">Your app is assigned a unique client id and secret; send them on each API request.</p>
    ${values.error ? notice('error', values.error) : ''}
    <form method="post" action="/apps" class="stack">
      ${csrfField(context.csrfToken)} ${appFields(values)}
      <div class="actions"><button type="submit" class="button">Submit</button><a href="/apps">Cancel</a></div>
    </form>`;
}
