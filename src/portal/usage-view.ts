/**
 * A subscription's usage as its developer sees it: calls used and left in the current window of
 * each plan limit, and calls over the last 24 hours or 7 days, drawn on the server as SVG.
 */
import type { LimitUsage } from '../services/consumer/usage.ts';
import type { PlanRow } from '../store/schema.ts';
import { timeSeriesChart } from '../web/charts.ts';
import { table, when } from '../web/components.ts';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import { limitInWords } from '../web/plan-words.ts';
import type { PortalDeps } from './deps.ts';

export const usageRanges: Record<string, { label: string; ms: number; bucketMs: number }> = {
  '24h': { label: 'Last 24 hours', ms: 86_400_000, bucketMs: 3_600_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, bucketMs: 6 * 3_600_000 },
};

/** "3 of 100 per hour used, 97 left" for a list of subscriptions; "Unlimited" when the plan has no limit. */
export function usageInWords(usage: LimitUsage[]): string {
  if (usage.length === 0) return 'Unlimited';
  return usage.map((u) => `${u.used} of ${limitInWords(u.limit).toLowerCase()} used, ${u.left} left`).join('; ');
}

function limitRows(usage: LimitUsage[]): unknown[][] {
  return usage.map((u) => [
    html`${limitInWords(u.limit)}${u.kind === 'burst' ? ' (burst)' : ''}`,
    html`${when(u.windowStart)} to ${when(u.windowEnd)}`,
    String(u.used),
    String(u.left),
  ]);
}

function rangeLinks(baseUrl: string, current: string): SafeHtml {
  return html`<ul class="range-links" aria-label="Usage period">
    ${Object.entries(usageRanges).map(
      ([key, r]) =>
        html`<li>
          <a href="${baseUrl}?range=${key}#usage" ${key === current ? html`aria-current="true"` : ''}>${r.label}</a>
        </li>`,
    )}
  </ul>`;
}

/** The usage section of a subscription's page; `baseUrl` is that page, `rangeKey` one of usageRanges. */
export async function usageSection(
  deps: PortalDeps,
  subscriptionId: string,
  plan: PlanRow,
  baseUrl: string,
  rangeKey: string,
): Promise<SafeHtml> {
  const key = usageRanges[rangeKey] ? rangeKey : '24h';
  const range = usageRanges[key];
  const toTs = Date.now();
  const fromTs = toTs - range.ms;
  const [usage, series] = await Promise.all([
    deps.services.limitUsage(subscriptionId, plan),
    deps.services.usageOverTime(subscriptionId, fromTs, toTs, range.bucketMs),
  ]);
  const limits =
    usage.length === 0
      ? html`<p>This plan is unlimited: there is no window to count against.</p>`
      : table(
          'Calls used and left in the current window of each limit',
          ['Limit', 'Current window', 'Used', 'Left'],
          limitRows(usage),
          { numeric: [2, 3] },
        );
  return html`<section aria-labelledby="usage">
    <h2 id="usage">Usage</h2>
    ${limits}
    <p class="hint">
      Counted from the analytics the gateway records; the gateway's own counter decides when a call is over the limit,
      so the figures can trail it by a few seconds. Windows are fixed and aligned to UTC (an hourly window starts on the
      hour), as the gateway counts them.
    </p>
    <h3>Calls over time</h3>
    ${rangeLinks(baseUrl, key)}
    ${timeSeriesChart(series, fromTs, toTs, range.bucketMs, `Calls of this subscription, ${range.label.toLowerCase()}`)}
  </section>`;
}
