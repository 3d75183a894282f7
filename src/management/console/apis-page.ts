/** The console's APIs: the list, one API (state, operations, assembly flow, definition), online and offline. */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import type { ApiState } from '../../store/schema.ts';
import { breadcrumbs, buttonForm, statePill, table, when } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { apiView } from '../../web/openapi-view.ts';
import { assemblyFlow } from './assembly-flow.ts';
import { can, signedInConsole, viewOf } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

/** The console page of one API. */
export function apiUrl(api: { name: string; version: string }): string {
  return `/console/apis/${encodeURIComponent(api.name)}/${encodeURIComponent(api.version)}`;
}

/** Registers the APIs pages and their state actions. */
export function registerApiPages(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  app.get('/apis', async (request, reply) => {
    const context = signedInConsole(request);
    const [apis, usedBy] = await Promise.all([
      services.listApis(context.org.id),
      services.productsUsingOrgApis(context.org.id),
    ]);
    const rows = apis.map((api) => {
      const used = usedBy.get(api.id) ?? [];
      return [
        html`<a href="${apiUrl(api)}">${api.title}</a>`,
        html`<code>${api.name}:${api.version}</code>`,
        html`<code>${api.base_path}</code>`,
        statePill(api.state),
        used.map((p) => `${p.name}:${p.version}`).join(', ') || 'None',
        can(context, 'apis:manage') ? stateButton(api, context.csrfToken) : '',
      ];
    });
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
      ${can(context, 'apis:manage') ? html`<div class="actions">${stateButton(api, context.csrfToken)}</div>` : ''}
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

  app.post('/apis/:name/:version/:action', { config: { permission: 'apis:manage' } }, async (request, reply) => {
    const context = signedInConsole(request);
    const { name, version, action } = request.params as { name: string; version: string; action: string };
    const states: Record<string, ApiState> = { activate: 'online', deactivate: 'offline' };
    if (!states[action]) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'action', id: action });
    await services.setApiState(context.org.id, name, version, states[action]);
    return reply.redirect(apiUrl({ name, version }), 303);
  });
}

/** The button that brings an API online or takes it offline. */
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
