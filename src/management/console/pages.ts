/** Console pages: overview, APIs (state, definition, assembly flow), products (lifecycle), approvals, consumers. */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { breadcrumbs, buttonForm, notice, statePill, table, when } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { apiView } from '../../web/openapi-view.ts';
import { approvalInWords, planLimitsInWords } from '../../web/plan-words.ts';
import type { ApiState, ProductState } from '../../store/schema.ts';
import { allowedProductTransitions } from '../../services/provider-services.ts';
import { assemblyFlow } from './assembly-flow.ts';
import { formatMs, timeSeriesChart } from '../../web/charts.ts';
import { signedInConsole, viewOf, withCatalog } from './context.ts';
import type { SignedInConsole } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

const productActions: Record<ProductState, string> = {
  published: 'Publish',
  deprecated: 'Deprecate',
  retired: 'Retire',
  archived: 'Archive',
  staged: 'Stage',
};

const actionStates: Record<string, ProductState> = {
  publish: 'published',
  deprecate: 'deprecated',
  retire: 'retired',
  archive: 'archived',
  stage: 'staged',
};

function apiUrl(api: { name: string; version: string }): string {
  return `/console/apis/${encodeURIComponent(api.name)}/${encodeURIComponent(api.version)}`;
}

function catalogPath(context: SignedInConsole, rest: string): string {
  return `/console/catalogs/${encodeURIComponent(context.catalog.name)}${rest}`;
}

function catalogPicker(context: SignedInConsole, action: string) {
  if (context.catalogs.length < 2)
    return html`<p class="hint">
      Catalog: <strong>${context.catalog.title}</strong> (<code>${context.catalog.name}</code>)
    </p>`;
  return html`<form method="get" action="${action}" class="filters">
    <div class="field">
      <label for="catalog">Catalog</label>
      <select id="catalog" name="catalog">
        ${context.catalogs.map((c) => html`<option value="${c.name}" ${c.id === context.catalog.id ? html` selected` : ''}>${c.title}</option>`)}
      </select>
    </div>
    <button type="submit" class="button secondary">Show</button>
  </form>`;
}

/** Registers the console's pages (analytics has its own module). */
export function registerConsolePages(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  app.get('/', async (request, reply) => {
    const context = signedInConsole(request);
    const [apis, products] = await Promise.all([
      services.listApis(context.org.id),
      services.listProducts(context.org.id, context.catalog.name),
    ]);
    const toTs = Date.now();
    const fromTs = toTs - 86_400_000;
    const filter = { orgName: context.org.name, catalogName: context.catalog.name, fromTs, toTs };
    const [series, percentiles] = await Promise.all([
      services.callsOverTime(filter, 3_600_000),
      services.latencyPercentiles(filter),
    ]);
    const errors = series.reduce((s, p) => s + Number(p.errors), 0);
    const main = html`<h1>Overview</h1>
      ${catalogPicker(context, '/console')}
      <ul class="stats">
        <li>
          <span class="value">${apis.filter((a) => a.state === 'online').length} / ${apis.length}</span
          ><span class="name">APIs online</span>
        </li>
        <li>
          <span class="value">${products.filter((p) => p.state === 'published').length}</span
          ><span class="name">Products published</span>
        </li>
        <li>
          <span class="value">${context.pendingCount}</span
          ><span class="name"><a href="${withCatalog('/console/approvals', context)}">Approvals waiting</a></span>
        </li>
        <li><span class="value">${percentiles.count}</span><span class="name">Calls, last 24 hours</span></li>
        <li><span class="value">${errors}</span><span class="name">Errors, last 24 hours</span></li>
        <li><span class="value">${formatMs(percentiles.p50)} ms</span><span class="name">Median latency</span></li>
      </ul>
      ${context.pendingCount > 0 ? notice('info', html`${context.pendingCount} subscription request${context.pendingCount === 1 ? ' is' : 's are'} waiting for approval. <a href="${withCatalog('/console/approvals', context)}">Open the task list</a>.`) : ''}
      <h2>Calls in the last 24 hours</h2>
      ${timeSeriesChart(series, fromTs, toTs, 3_600_000, 'Calls per hour, last 24 hours')}
      <p><a href="${withCatalog('/console/analytics', context)}">More analytics</a></p>`;
    return sendConsolePage(reply, viewOf(context), { title: 'Overview', section: 'overview', main });
  });

  app.get('/apis', async (request, reply) => {
    const context = signedInConsole(request);
    const apis = await services.listApis(context.org.id);
    const rows = await Promise.all(
      apis.map(async (api) => {
        const used = await services.productsUsingApi(api.id);
        return [
          html`<a href="${apiUrl(api)}">${api.title}</a>`,
          html`<code>${api.name}:${api.version}</code>`,
          html`<code>${api.base_path}</code>`,
          statePill(api.state),
          used.map((p) => `${p.name}:${p.version}`).join(', ') || 'None',
          stateButton(api, context.csrfToken),
        ];
      }),
    );
    const main = html`<h1>APIs</h1>
      <p class="lede">API definitions of ${context.org.title}. Offline APIs answer 404 at the gateway.</p>
      ${apis.length === 0 ? html`<p>No APIs yet; import one with <code>portico apis import</code>.</p>` : table('APIs', ['API', 'Name:version', 'Base path', 'State', 'Products', 'Action'], rows, { hideCaption: true })}`;
    return sendConsolePage(reply, viewOf(context), { title: 'APIs', section: 'apis', main });
  });

  app.get('/apis/:name/:version', async (request, reply) => {
    const context = signedInConsole(request);
    const { name, version } = request.params as { name: string; version: string };
    const api = await services.api(context.org.id, name, version);
    const document = JSON.parse(api.document) as Record<string, unknown>;
    const view = apiView(document);
    const used = await services.productsUsingApi(api.id);
    const { failures } = await services.gatewayFailures(context.org.id, {
      api: `${api.name}:${api.version}`,
    });
    const main = html`${breadcrumbs([['APIs', '/console/apis'], [`${api.title} ${api.version}`]])}
      <h1>${api.title} <span class="meta">${api.version}</span> ${statePill(api.state)}</h1>
      ${
        failures.length === 0
          ? ''
          : html`<div class="notice error" role="alert">
              <p>The gateway does not serve this API: it does not compile there.</p>
              <ul>
                ${failures.map((f) => html`<li>Catalog <code>${f.catalog}</code>: ${f.reason}</li>`)}
              </ul>
            </div>`
      }
      <dl class="facts">
        <dt>Name</dt>
        <dd><code>${api.name}:${api.version}</code></dd>
        <dt>Base path</dt>
        <dd><code>${api.base_path}</code></dd>
        <dt>Products</dt>
        <dd>${used.map((p) => `${p.name}:${p.version}`).join(', ') || 'None'}</dd>
        <dt>Updated</dt>
        <dd>${when(api.updated_at)}</dd>
      </dl>
      <div class="actions">${stateButton(api, context.csrfToken)}</div>
      <h2>Operations</h2>
      ${table(
        'Operations',
        ['Method', 'Path', 'Operation id', 'Summary'],
        view.operations.map((o) => [
          html`<span class="method ${o.method.toLowerCase()}">${o.method}</span>`,
          html`<code>${o.path}</code>`,
          o.operationId ?? '',
          o.summary,
        ]),
        { hideCaption: true },
      )}
      <h2>Assembly</h2>
      ${assemblyFlow(document)}
      <h2>Definition</h2>
      <details>
        <summary>Show the stored definition (JSON)</summary>
        <pre tabindex="0"><code>${JSON.stringify(document, null, 2)}</code></pre>
      </details>`;
    return sendConsolePage(reply, viewOf(context), {
      title: `${api.title} ${api.version}`,
      section: 'apis',
      main,
    });
  });

  app.post('/apis/:name/:version/:action', async (request, reply) => {
    const context = signedInConsole(request);
    const { name, version, action } = request.params as { name: string; version: string; action: string };
    const states: Record<string, ApiState> = { activate: 'online', deactivate: 'offline' };
    if (!states[action]) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'action', id: action });
    await services.setApiState(context.org.id, name, version, states[action]);
    return reply.redirect(apiUrl({ name, version }), 303);
  });

  app.get('/products', async (request, reply) => {
    const context = signedInConsole(request);
    const products = await services.listProducts(context.org.id, context.catalog.name);
    const sections = await Promise.all(
      products.map(async (product) => {
        const [plans, apis] = await Promise.all([services.productPlans(product.id), services.productApis(product.id)]);
        const actions = allowedProductTransitions(product.state).filter((s) => s !== product.state);
        const action = (state: ProductState) => Object.keys(actionStates).find((k) => actionStates[k] === state)!;
        return html`<section class="panel" aria-labelledby="p-${product.id}">
          <h2 id="p-${product.id}">
            ${product.title} <span class="meta">${product.version}</span> ${statePill(product.state)}
          </h2>
          <dl class="facts">
            <dt>Name</dt>
            <dd><code>${product.name}:${product.version}</code></dd>
            <dt>Visibility</dt>
            <dd>view: ${product.view_type}, subscribe: ${product.subscribe_type}</dd>
            <dt>APIs</dt>
            <dd>${apis.map((a, i) => html`${i > 0 ? ', ' : ''}<a href="${apiUrl(a)}">${a.name}:${a.version}</a>`)}</dd>
            <dt>Plans</dt>
            <dd>
              ${plans.map((p) => html`${p.title}: ${planLimitsInWords(p).rate.join(', ')}, ${approvalInWords(p).toLowerCase()}<br />`)}
            </dd>
          </dl>
          <div class="actions">
            ${actions.map((state) =>
              buttonForm(
                catalogPath(
                  context,
                  `/products/${encodeURIComponent(product.name)}/${encodeURIComponent(product.version)}/${action(state)}`,
                ),
                context.csrfToken,
                productActions[state],
                {
                  kind:
                    state === 'retired' || state === 'archived'
                      ? 'danger'
                      : state === 'published'
                        ? undefined
                        : 'secondary',
                  small: true,
                  confirm:
                    state === 'retired'
                      ? `Retire ${product.title} ${product.version}? Its subscriptions end.`
                      : undefined,
                },
              ),
            )}
          </div>
        </section>`;
      }),
    );
    const main = html`<h1>Products</h1>
      ${catalogPicker(context, '/console/products')}
      <p class="lede">
        Lifecycle: staged → published → deprecated (existing subscribers only) → retired (subscriptions end) → archived.
      </p>
      ${products.length === 0 ? html`<p>No products in this catalog.</p>` : html`<div class="panels">${sections}</div>`}`;
    return sendConsolePage(reply, viewOf(context), { title: 'Products', section: 'products', main });
  });

  app.post('/catalogs/:catalog/products/:name/:version/:action', async (request, reply) => {
    const context = signedInConsole(request);
    const { catalog, name, version, action } = request.params as {
      catalog: string;
      name: string;
      version: string;
      action: string;
    };
    const state = actionStates[action];
    if (!state) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'action', id: action });
    await services.setProductState(context.org.id, catalog, name, version, state);
    return reply.redirect(withCatalog('/console/products', context), 303);
  });

  app.get('/approvals', async (request, reply) => {
    const context = signedInConsole(request);
    const all = await services.listSubscriptions(context.catalog.id);
    const pending = all.filter((s) => s.state === 'pending');
    const decided = all
      .filter((s) => s.state !== 'pending')
      .slice(-15)
      .reverse();
    const rows = pending.map((s) => [
      html`${s.consumer_org_title} <span class="hint">(${s.consumer_org_name})</span>`,
      s.app_title,
      `${s.product_title} ${s.product_version}`,
      s.plan_title,
      when(s.created_at),
      html`<div class="actions">
        ${buttonForm(catalogPath(context, `/subscriptions/${encodeURIComponent(s.id)}/approve`), context.csrfToken, 'Approve', { small: true })}${buttonForm(
          catalogPath(context, `/subscriptions/${encodeURIComponent(s.id)}/reject`),
          context.csrfToken,
          'Decline',
          { small: true, kind: 'danger', confirm: `Decline ${s.app_title}'s request for ${s.plan_title}?` },
        )}
      </div>`,
    ]);
    const main = html`<h1>Approvals</h1>
      ${catalogPicker(context, '/console/approvals')}
      <p class="lede">
        Subscription requests to plans that need approval. Approved subscriptions work at the gateway at once.
      </p>
      ${pending.length === 0 ? notice('ok', 'No requests are waiting.') : table('Waiting for approval', ['Consumer organization', 'App', 'Product', 'Plan', 'Requested', 'Decision'], rows)}
      <h2>Recent subscriptions</h2>
      ${table(
        'Recent subscriptions',
        ['Consumer organization', 'App', 'Product', 'Plan', 'State', 'Updated'],
        decided.map((s) => [
          s.consumer_org_title,
          s.app_title,
          `${s.product_title} ${s.product_version}`,
          s.plan_title,
          statePill(s.state),
          when(s.updated_at),
        ]),
        { hideCaption: true },
      )}`;
    return sendConsolePage(reply, viewOf(context), { title: 'Approvals', section: 'approvals', main });
  });

  app.post('/catalogs/:catalog/subscriptions/:id/:decision', async (request, reply) => {
    const context = signedInConsole(request);
    const { catalog, id, decision } = request.params as { catalog: string; id: string; decision: string };
    if (decision !== 'approve' && decision !== 'reject')
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'decision', id: decision });
    await services.decideSubscription(context.org.id, catalog, id, decision);
    return reply.redirect(withCatalog('/console/approvals', context), 303);
  });

  app.get('/consumers', async (request, reply) => {
    const context = signedInConsole(request);
    const [orgs, apps, subscriptions] = await Promise.all([
      services.listConsumerOrgs(context.catalog.id),
      services.listApps(context.catalog.id),
      services.listSubscriptions(context.catalog.id),
    ]);
    const sections = orgs.map((org) => {
      const orgApps = apps.filter((a) => a.consumer_org_id === org.id);
      const rows = orgApps.map((a) => [
        a.title,
        when(a.created_at),
        html`${subscriptions.filter((s) => s.app_id === a.id).map((s) => html`${s.product_title} ${s.product_version} · ${s.plan_title} ${statePill(s.state)}<br />`)}`,
      ]);
      return html`<section class="panel" aria-labelledby="o-${org.id}">
        <h2 id="o-${org.id}">${org.title}</h2>
        <p class="hint"><code>${org.name}</code> · since ${when(org.created_at)}</p>
        ${orgApps.length === 0 ? html`<p>No apps.</p>` : table(`Apps of ${org.title}`, ['App', 'Created', 'Subscriptions'], rows, { hideCaption: true })}
      </section>`;
    });
    const main = html`<h1>Consumer organizations</h1>
      ${catalogPicker(context, '/console/consumers')}
      <p class="lede">
        ${orgs.length} organization${orgs.length === 1 ? '' : 's'}, ${apps.length} app${apps.length === 1 ? '' : 's'}.
      </p>
      <div class="panels">${sections}</div>`;
    return sendConsolePage(reply, viewOf(context), { title: 'Consumers', section: 'consumers', main });
  });
}

function stateButton(api: { name: string; version: string; state: string; title: string }, csrf: string) {
  const online = api.state === 'online';
  return buttonForm(
    `${apiUrl(api)}/${online ? 'deactivate' : 'activate'}`,
    csrf,
    online ? 'Take offline' : 'Bring online',
    {
      kind: online ? 'secondary' : undefined,
      small: true,
      confirm: online ? `Take ${api.title} offline? Its calls will answer 404.` : undefined,
    },
  );
}
