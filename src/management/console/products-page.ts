/** The console's products of a catalog, with the lifecycle actions each state allows. */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { allowedProductTransitions } from '../../services/provider-services.ts';
import type { ProductState } from '../../store/schema.ts';
import { buttonForm, statePill } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { approvalInWords, planLimitsInWords } from '../../web/plan-words.ts';
import { apiUrl } from './apis-page.ts';
import { catalogPath, catalogPicker } from './catalog-picker.ts';
import { can, signedInConsole, viewOf, withCatalog } from './context.ts';
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

/** Registers the products page and the lifecycle actions. */
export function registerProductsPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  app.get('/products', async (request, reply) => {
    const context = signedInConsole(request);
    const products = await services.listProducts(context.org.id, context.catalog.name);
    const sections = await Promise.all(
      products.map(async (product) => {
        const [plans, apis] = await Promise.all([services.productPlans(product.id), services.productApis(product.id)]);
        const actions = can(context, 'products:manage')
          ? allowedProductTransitions(product.state).filter((s) => s !== product.state)
          : [];
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

  const lifecycle = { config: { permission: 'products:manage' as const } };
  app.post('/catalogs/:catalog/products/:name/:version/:action', lifecycle, async (request, reply) => {
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
}
