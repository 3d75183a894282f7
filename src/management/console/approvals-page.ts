/** The console's approvals: subscription requests waiting for a decision, and the recent ones. */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { buttonForm, notice, statePill, table, when } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import { catalogPath, catalogPicker } from './catalog-picker.ts';
import { can, signedInConsole, viewOf, withCatalog } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

/** Registers the approvals page and the approve and decline actions. */
export function registerApprovalsPage(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  app.get('/approvals', async (request, reply) => {
    const context = signedInConsole(request);
    const all = await services.listSubscriptions(context.catalog.id);
    const pending = all.filter((s) => s.state === 'pending');
    const decided = all
      .filter((s) => s.state !== 'pending')
      .slice(-15)
      .reverse();
    const decides = can(context, 'subscriptions:manage');
    const rows = pending.map((s) => [
      html`${s.consumer_org_title} <span class="hint">(${s.consumer_org_name})</span>`,
      s.app_title,
      `${s.product_title} ${s.product_version}`,
      s.plan_title,
      when(s.created_at),
      decides
        ? html`<div class="actions">
            ${buttonForm(catalogPath(context, `/subscriptions/${encodeURIComponent(s.id)}/approve`), context.csrfToken, 'Approve', { small: true })}${buttonForm(
              catalogPath(context, `/subscriptions/${encodeURIComponent(s.id)}/reject`),
              context.csrfToken,
              'Decline',
              { small: true, kind: 'danger', confirm: `Decline ${s.app_title}'s request for ${s.plan_title}?` },
            )}
          </div>`
        : 'Needs the subscriptions:manage permission',
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

  const deciding = { config: { permission: 'subscriptions:manage' as const } };
  app.post('/catalogs/:catalog/subscriptions/:id/:decision', deciding, async (request, reply) => {
    const context = signedInConsole(request);
    const { catalog, id, decision } = request.params as { catalog: string; id: string; decision: string };
    if (decision !== 'approve' && decision !== 'reject')
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'decision', id: decision });
    await services.decideSubscription(context.org.id, catalog, id, decision);
    return reply.redirect(withCatalog('/console/approvals', context), 303);
  });
}
