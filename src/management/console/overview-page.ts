/** The console's overview: APIs online, products published, approvals waiting and the last day's calls. */
import type { FastifyInstance } from 'fastify';
import { formatMs, timeSeriesChart } from '../../web/charts.ts';
import { notice } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { catalogPicker } from './catalog-picker.ts';
import { signedInConsole, viewOf, withCatalog } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

/** Registers the overview page (`/console`). */
export function registerOverviewPage(app: FastifyInstance, deps: ConsoleDeps): void {
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
}
