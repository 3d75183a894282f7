/** The console's consumer organizations of a catalog, their apps and subscriptions. */
import type { FastifyInstance } from 'fastify';
import { statePill, table, when } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { catalogPicker } from './catalog-picker.ts';
import { signedInConsole, viewOf } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

/** Registers the consumers page. */
export function registerConsumersPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

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
