/**
 * Analytics: calls over time, calls by API, operation, status, app and plan, latency
 * percentiles, the latest calls, and — for APIs whose activity log keeps `payload` — the
 * request and response of a chosen call.
 */
import type { FastifyInstance } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { breadcrumbs, table, when } from '../../web/components.ts';
import { queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import type { DimensionCount, EventDimension, EventFilter } from '../../store/analytics.ts';
import { barChart, formatMs, timeSeriesChart } from '../../web/charts.ts';
import { signedInConsole, viewOf, withCatalog } from './context.ts';
import { sendConsolePage } from './layout.ts';
import type { ConsoleDeps } from './plugin.ts';

const ranges: Record<string, { label: string; ms: number; bucketMs: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000, bucketMs: 60_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000, bucketMs: 3_600_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, bucketMs: 6 * 3_600_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000, bucketMs: 86_400_000 },
};

const dimensions: Array<[EventDimension, string]> = [
  ['api_name', 'Calls by API'],
  ['operation_id', 'Calls by operation'],
  ['status', 'Calls by status'],
  ['app_id', 'Calls by app'],
  ['plan_id', 'Calls by plan'],
  ['consumer_org_id', 'Calls by consumer organization'],
];

/**
 * A bar's label. Apps, plans and consumer orgs are counted by id and named with what tells
 * same-named ones apart: "Walker Shop (org-a)", "Silver (accessories)" (issue 16).
 */
function dimensionLabel(dimension: EventDimension, row: DimensionCount): string {
  const { labels } = row;
  if (dimension === 'app_id') return row.key === '' ? '(no app)' : `${labels.app_name} (${labels.consumer_org_name})`;
  if (dimension === 'plan_id') return row.key === '' ? '(no plan)' : `${labels.plan_name} (${labels.product_name})`;
  if (dimension === 'consumer_org_id') return row.key === '' ? '(none)' : labels.consumer_org_name;
  return row.key;
}

function pretty(text: string | null): string {
  if (text === null || text === '') return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function headersText(text: string | null): string {
  if (!text) return '';
  try {
    const parsed = JSON.parse(text) as Record<string, unknown> | Array<[string, string]>;
    const entries = Array.isArray(parsed) ? parsed : Object.entries(parsed);
    return entries.map(([k, v]) => `${k}: ${String(v)}`).join('\n');
  } catch {
    return text;
  }
}

function percentileChart(p: { p50: number; p90: number; p99: number }): SafeHtml {
  return barChart(
    [
      { label: 'p50 (median)', value: Number(formatMs(p.p50)) },
      { label: 'p90', value: Number(formatMs(p.p90)) },
      { label: 'p99', value: Number(formatMs(p.p99)) },
    ],
    'Latency percentiles in milliseconds',
    'ms',
  );
}

/** Registers the analytics page and the call detail page. */
export function registerAnalyticsPages(app: FastifyInstance, deps: ConsoleDeps): void {
  const { services } = deps;

  app.get('/analytics', async (request, reply) => {
    const context = signedInConsole(request);
    const rangeKey = ranges[queryField(request, 'range')] ? queryField(request, 'range') : '24h';
    const range = ranges[rangeKey];
    const apiName = queryField(request, 'api') || undefined;
    const toTs = Date.now();
    const fromTs = toTs - range.ms;
    const filter: EventFilter = {
      orgName: context.org.name,
      catalogName: context.catalog.name,
      apiName,
      fromTs,
      toTs,
    };
    const apis = await deps.services.listApis(context.org.id);
    const [series, percentiles, events, ...groups] = await Promise.all([
      services.callsOverTime(filter, range.bucketMs),
      services.latencyPercentiles(filter),
      services.events(filter, 25),
      ...dimensions.map(([dimension]) => services.eventCounts(filter, dimension)),
    ]);
    const errors = series.reduce((s, p) => s + Number(p.errors), 0);
    const panels = dimensions.map(([dimension, title], i) => {
      const rows = groups[i].map((g) => ({
        label: dimensionLabel(dimension, g),
        value: Number(g.calls),
        note: `mean ${formatMs(Number(g.mean_ms))} ms`,
        bad: dimension === 'status' && Number(g.key) >= 400,
      }));
      return html`<section class="panel" aria-labelledby="d-${dimension}">
        <h2 id="d-${dimension}">${title}</h2>
        ${barChart(rows, title)}
      </section>`;
    });
    const eventRows = events.map((e) => [
      when(e.ts),
      `${e.api_name} ${e.api_version}`,
      html`<code>${e.verb} ${e.path}</code>`,
      String(e.status),
      `${formatMs(e.latency_ms)} ms`,
      e.app_name ? `${e.app_name} (${e.consumer_org_name})` : '—',
      e.user_name || '—',
      e.content === 'payload'
        ? html`<a href="${withCatalog(`/console/analytics/events/${e.id}`, context)}">Request and response</a>`
        : html`<a href="${withCatalog(`/console/analytics/events/${e.id}`, context)}">Details</a>`,
    ]);
    const main = html`<h1>Analytics</h1>
      <form method="get" action="/console/analytics" class="filters">
        ${context.catalogs.length > 1 ? html`<input type="hidden" name="catalog" value="${context.catalog.name}" />` : ''}
        <div class="field">
          <label for="range">Period</label
          ><select id="range" name="range">
            ${Object.entries(ranges).map(([key, r]) => html`<option value="${key}" ${key === rangeKey ? html`selected` : ''}>${r.label}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="api">API</label
          ><select id="api" name="api">
            <option value="">All APIs</option>
            ${[...new Set(apis.map((a) => a.name))].map((n) => html`<option value="${n}" ${n === apiName ? html`selected` : ''}>${n}</option>`)}
          </select>
        </div>
        <button type="submit" class="button secondary">Show</button>
      </form>
      <ul class="stats">
        <li><span class="value">${percentiles.count}</span><span class="name">Calls</span></li>
        <li><span class="value">${errors}</span><span class="name">Errors (4xx/5xx)</span></li>
        <li><span class="value">${formatMs(percentiles.p50)} ms</span><span class="name">p50 latency</span></li>
        <li><span class="value">${formatMs(percentiles.p90)} ms</span><span class="name">p90 latency</span></li>
        <li><span class="value">${formatMs(percentiles.p99)} ms</span><span class="name">p99 latency</span></li>
      </ul>
      <h2>Calls over time</h2>
      ${timeSeriesChart(series, fromTs, toTs, range.bucketMs, `Calls over time, ${range.label.toLowerCase()}`)}
      <div class="panels">
        ${panels}
        <section class="panel" aria-labelledby="d-latency">
          <h2 id="d-latency">Latency percentiles</h2>
          ${percentileChart(percentiles)}
        </section>
      </div>
      <h2>Latest calls</h2>
      ${events.length === 0 ? html`<p>No calls in this period.</p>` : table('Latest calls', ['Time', 'API', 'Call', 'Status', 'Latency', 'App', 'User', 'Recorded'], eventRows, { hideCaption: true })}`;
    return sendConsolePage(reply, viewOf(context), { title: 'Analytics', section: 'analytics', main });
  });

  app.get('/analytics/events/:id', async (request, reply) => {
    const context = signedInConsole(request);
    const id = Number((request.params as { id: string }).id);
    const event = Number.isInteger(id) ? await services.event(id) : undefined;
    if (!event || event.org_name !== context.org.name)
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'event', id: String(id) });
    const main = html`${breadcrumbs([['Analytics', withCatalog('/console/analytics', context)], [`Call ${event.tx_id}`]])}
      <h1>Call <code>${event.tx_id}</code></h1>
      <dl class="facts">
        <dt>Time</dt>
        <dd>${when(event.ts)}</dd>
        <dt>API</dt>
        <dd>${event.api_name} ${event.api_version} · operation <code>${event.operation_id}</code></dd>
        <dt>Request</dt>
        <dd><code>${event.verb} ${event.path}</code></dd>
        <dt>Status</dt>
        <dd>${event.status}${event.error_name ? ` (${event.error_name})` : ''}</dd>
        <dt>Latency</dt>
        <dd>${formatMs(event.latency_ms)} ms (backend ${formatMs(event.backend_ms)} ms)</dd>
        <dt>App</dt>
        <dd>${event.app_name || '—'} · ${event.consumer_org_name || '—'}</dd>
        <dt>User</dt>
        <dd>${event.user_name || '—'}</dd>
        <dt>Product and plan</dt>
        <dd>${event.product_name || '—'} · ${event.plan_name || '—'}</dd>
        <dt>Recorded</dt>
        <dd>${event.content}</dd>
      </dl>
      ${
        event.content === 'payload' || event.content === 'header'
          ? html`<div class="two-col">
              <section aria-labelledby="req-h">
                <h2 id="req-h">Request</h2>
                <h3>Headers</h3>
                <pre tabindex="0">${headersText(event.request_headers)}</pre>
                ${
                  event.request_body
                    ? html`<h3>Body</h3>
                        <pre tabindex="0">${pretty(event.request_body)}</pre>`
                    : ''
                }
              </section>
              <section aria-labelledby="res-h">
                <h2 id="res-h">Response</h2>
                <h3>Headers</h3>
                <pre tabindex="0">${headersText(event.response_headers)}</pre>
                ${
                  event.response_body
                    ? html`<h3>Body</h3>
                        <pre tabindex="0">${pretty(event.response_body)}</pre>`
                    : ''
                }
              </section>
            </div>`
          : html`<p>
              This API's activity log does not keep headers or payloads (its <code>activity-log</code> content is
              <code>${event.content}</code>).
            </p>`
      }`;
    return sendConsolePage(reply, viewOf(context), {
      title: `Call ${event.tx_id}`,
      section: 'analytics',
      main,
    });
  });
}
