/** The home page, the API Products list and a product's page with its APIs and plans. */
import type { FastifyInstance } from 'fastify';
import type { PlanRow, ProductRow } from '../../store/schema.ts';
import type { SubscriptionDetail } from '../../services/consumer-services.ts';
import { productInfo } from '../catalog-view.ts';
import { breadcrumbs, notice, statePill } from '../../web/components.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { html, path } from '../../web/html.ts';
import { sendPortalPage } from '../layout.ts';
import { approvalInWords, planLimitsInWords } from '../../web/plan-words.ts';

/** The product page's URL. */
export function productUrl(product: { name: string; version: string }): string {
  return path('products', product.name, product.version);
}

function productCard(product: ProductRow) {
  const info = productInfo(product);
  return html`<li class="card">
    <h2><a href="${productUrl(product)}">${product.title}</a></h2>
    <p class="meta">
      Version ${product.version}${product.state === 'deprecated' ? html` · ${statePill('deprecated')}` : ''}
    </p>
    <p>${info.summary || info.description || 'No description.'}</p>
  </li>`;
}

function productList(products: ProductRow[], context: PortalContext) {
  if (products.length === 0) return html`<p>No API products are available to you yet.</p>`;
  return html`<ul class="cards">
      ${products.map(productCard)}
    </ul>
    ${signedIn(context) ? '' : html`<p class="hint">Sign in to see the products offered to registered developers.</p>`}`;
}

function planCard(product: ProductRow, plan: PlanRow, context: PortalContext) {
  const limits = planLimitsInWords(plan);
  const subscribe = signedIn(context)
    ? html`<a
        class="button"
        href="${productUrl(product)}/subscribe?plan=${encodeURIComponent(plan.name)}"
        aria-label="Subscribe to the ${plan.title} plan"
        >Subscribe</a
      >`
    : html`<a class="button secondary" href="/sign-in?next=${encodeURIComponent(productUrl(product))}"
        >Sign in to subscribe</a
      >`;
  return html`<li class="card plan">
    <h3>${plan.title}</h3>
    <p>${plan.description}</p>
    ${limits.rate.map((words) => html`<p class="limit">${words}</p>`)}
    ${limits.burst.map((words) => html`<p class="meta">Burst: ${words}</p>`)}
    <p class="meta">${approvalInWords(plan)}</p>
    <div class="push">
      ${product.state === 'published' ? subscribe : html`<p class="meta">Takes no new subscriptions.</p>`}
    </div>
  </li>`;
}

function mySubscriptions(subscriptions: SubscriptionDetail[]) {
  if (subscriptions.length === 0) return '';
  return html`<h2>Your subscriptions</h2>
    <ul>
      ${subscriptions.map(
        (s) =>
          html`<li><a href="${path('apps', s.app_id)}">${s.app_title}</a> — ${s.plan_title} ${statePill(s.state)}</li>`,
      )}
    </ul>`;
}

function homePage(context: PortalContext, products: ProductRow[]) {
  const start = signedIn(context)
    ? html`<a class="button" href="/apps/new">Create an app</a>
        <a class="button secondary" href="/products">Browse API products</a>`
    : html`<a class="button" href="/sign-up">Create an account</a>
        <a class="button secondary" href="/sign-in">Sign in</a>`;
  return html`<section class="hero" aria-labelledby="hero-title">
      <h1 id="hero-title">${signedIn(context) ? html`Get started, ${context.user.name}` : 'Build with our APIs'}</h1>
      <p class="lede">
        Find API products, register your application, subscribe it to a plan and try the operations right here.
      </p>
      <p>${start}</p>
    </section>
    <h2>Get started</h2>
    <ol class="steps">
      <li>Sign in or create an account for your organization.</li>
      <li>Create an app: it receives a client id and secret.</li>
      <li>Subscribe the app to a plan of an API product.</li>
      <li>Open an API and use Try it, or call the gateway with your client id.</li>
    </ol>
    <h2>API products</h2>
    ${productList(products, context)}`;
}

/** Registers the home, product list and product pages. */
export function registerProductRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;

  app.get('/', async (request, reply) => {
    const context = portalContext(request);
    const products = await services.visibleProducts(context);
    return sendPortalPage(reply, context, {
      title: 'Home',
      section: 'home',
      main: homePage(context, products),
    });
  });

  app.get('/products', async (request, reply) => {
    const context = portalContext(request);
    const products = await services.visibleProducts(context);
    const main = html`<h1>API Products</h1>
      <p class="lede">Each product bundles APIs and offers plans; subscribe an app to a plan to call its APIs.</p>
      ${productList(products, context)}`;
    return sendPortalPage(reply, context, { title: 'API Products', section: 'products', main });
  });

  app.get('/products/:name/:version', async (request, reply) => {
    const context = portalContext(request);
    const { name, version } = request.params as { name: string; version: string };
    const product = await services.visibleProduct(context, name, version);
    const [plans, apis, subscriptions] = await Promise.all([
      services.productPlans(product.id),
      services.productApis(product.id),
      services.orgSubscriptions(context),
    ]);
    const info = productInfo(product);
    const main = html`${breadcrumbs([['API Products', '/products'], [`${product.title} ${product.version}`]])}
      <h1>${product.title} <span class="meta">${product.version}</span></h1>
      ${product.state === 'deprecated' ? notice('warn', 'This product is deprecated: existing subscriptions keep working, new ones are not accepted.') : ''}
      ${info.summary ? html`<p class="lede">${info.summary}</p>` : ''}${info.description ? html`<p>${info.description}</p>` : ''}
      <h2>APIs</h2>
      <ul class="cards">
        ${apis.map(
          (api) =>
            html`<li class="card">
              <h3>
                <a href="${productUrl(product)}/apis/${encodeURIComponent(api.name)}/${encodeURIComponent(api.version)}"
                  >${api.title} ${api.version}</a
                >
              </h3>
              <p class="meta">
                Base path
                <code>${api.base_path}</code>${api.state === 'offline' ? html` · ${statePill('offline')}` : ''}
              </p>
            </li>`,
        )}
      </ul>
      <h2>Plans</h2>
      <ul class="cards">
        ${plans.map((plan) => planCard(product, plan, context))}
      </ul>
      ${mySubscriptions(subscriptions.filter((s) => s.product_id === product.id))}`;
    return sendPortalPage(reply, context, {
      title: `${product.title} ${product.version}`,
      section: 'products',
      main,
    });
  });
}
