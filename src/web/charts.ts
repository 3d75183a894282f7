/**
 * Server-side SVG charts for the console and the portal (no script, no inline style: CSP-safe). Each chart is
 * an `img` with a title and a description, and the same numbers are offered as a table.
 */
import { html } from './html.ts';
import type { SafeHtml } from './html.ts';

export interface TimePoint {
  bucket: number;
  calls: number;
  errors: number;
}

let chartCounter = 0;

function chartId(): string {
  chartCounter = (chartCounter + 1) % 1_000_000;
  return `chart-${chartCounter}`;
}

function niceMax(value: number): number {
  if (value <= 5) return 5;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (value <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

function timeLabel(ts: number, spanMs: number): string {
  const iso = new Date(ts).toISOString();
  return spanMs > 2 * 86_400_000 ? iso.slice(5, 10) : iso.slice(11, 16);
}

/** Calls (area) and errors (dashed line) per time bucket from `fromTs` to `toTs`; empty buckets count 0. */
export function timeSeriesChart(
  points: TimePoint[],
  fromTs: number,
  toTs: number,
  bucketMs: number,
  title: string,
): SafeHtml {
  const byBucket = new Map(points.map((p) => [Number(p.bucket), p]));
  const buckets: TimePoint[] = [];
  for (let t = Math.floor(fromTs / bucketMs) * bucketMs; t < toTs; t += bucketMs) {
    const p = byBucket.get(t);
    buckets.push({ bucket: t, calls: Number(p?.calls ?? 0), errors: Number(p?.errors ?? 0) });
  }
  const width = 720;
  const height = 240;
  const left = 48;
  const right = 12;
  const top = 12;
  const bottom = 30;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const max = niceMax(Math.max(0, ...buckets.map((b) => b.calls)));
  const x = (i: number) => left + (buckets.length <= 1 ? plotW / 2 : (i * plotW) / (buckets.length - 1));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const line = (key: 'calls' | 'errors') =>
    buckets.map((b, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(b[key]).toFixed(1)}`).join(' ');
  const area =
    buckets.length > 0
      ? `${line('calls')} L${x(buckets.length - 1).toFixed(1)},${y(0)} L${x(0).toFixed(1)},${y(0)} Z`
      : '';
  // Five gridlines when the maximum divides into quarters evenly, else fifths (niceMax gives 5, 10, 20, 25, 50, …).
  const parts = max % 4 === 0 ? 4 : 5;
  const ticks = Array.from({ length: parts + 1 }, (_, i) => (max * i) / parts);
  const labelEvery = Math.max(1, Math.ceil(buckets.length / 6));
  const total = buckets.reduce((s, b) => s + b.calls, 0);
  const errors = buckets.reduce((s, b) => s + b.errors, 0);
  const description = `${total} calls, ${errors} errors, from ${new Date(fromTs).toISOString()} to ${new Date(toTs).toISOString()}.`;
  const id = chartId();
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-t ${id}-d">
      <title id="${id}-t">${title}</title>
      <desc id="${id}-d">${description}</desc>
      ${ticks.map((t) => html`<line class="grid" x1="${left}" x2="${width - right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" /><text x="${left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${t}</text>`)}
      <path class="area" d="${area}" />
      <path class="line" d="${line('calls')}" />
      <path class="err" d="${line('errors')}" />
      <line class="axis" x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}" />
      ${buckets.map((b, i) => (i % labelEvery === 0 ? html`<text x="${x(i).toFixed(1)}" y="${height - 10}" text-anchor="middle" class="label-muted">${timeLabel(b.bucket, toTs - fromTs)}</text>` : ''))}
    </svg>
    <p class="hint">Solid area: calls · dashed line: errors (status 400 and above). Times in UTC.</p>`;
}

export interface BarRow {
  label: string;
  value: number;
  /** Shown after the value, e.g. "mean 12 ms". */
  note?: string;
  /** Drawn in the error colour (e.g. 4xx/5xx statuses). */
  bad?: boolean;
}

/** Milliseconds for people: one decimal below 10 ms, whole numbers above. */
export function formatMs(value: number): string {
  return value < 10 ? value.toFixed(1) : String(Math.round(value));
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;
}

/** Cuts the middle out of a long text: both its start and its end often tell names apart. */
function shortenMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

/**
 * A label cut to `max` characters. A trailing "(org)" keeps up to half the room, cut in the
 * middle, so "Walker Shop (walker-org-a)" and "Walker Shop (walker-org-b)" stay apart.
 */
export function clipLabel(label: string, max: number): string {
  if (label.length <= max) return label;
  const qualified = /^(.*) \((.*)\)$/.exec(label);
  if (!qualified) return shorten(label, max);
  const qualifier = shortenMiddle(qualified[2], Math.floor(max / 2) - 3);
  return `${shorten(qualified[1], max - qualifier.length - 3)} (${qualifier})`;
}

/** A horizontal bar chart; labels on the left, values at the bar's end. */
export function barChart(rows: BarRow[], title: string, unit = 'calls'): SafeHtml {
  if (rows.length === 0) return html`<p>No data in this period.</p>`;
  const shown = rows.slice(0, 12);
  const width = 480;
  const barH = 22;
  const gap = 8;
  const labelW = 170;
  const valueW = 120;
  const height = shown.length * (barH + gap) + gap;
  const max = Math.max(1, ...shown.map((r) => r.value));
  const plotW = width - labelW - valueW;
  const id = chartId();
  const clip = (s: string) => clipLabel(s, 24);
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="${id}-t ${id}-d">
    <title id="${id}-t">${title}</title>
    <desc id="${id}-d">${shown.map((r) => `${r.label || '(none)'}: ${r.value} ${unit}`).join('; ')}</desc>
    ${shown.map((r, i) => {
      const yTop = gap + i * (barH + gap);
      const w = Math.max(2, (r.value / max) * plotW);
      return html`<text x="${labelW - 8}" y="${yTop + barH / 2 + 4}" text-anchor="end"
          >${clip(r.label || '(none)')}</text
        >
        <rect
          class="bar${r.bad ? ' err' : ''}"
          x="${labelW}"
          y="${yTop}"
          width="${w.toFixed(1)}"
          height="${barH}"
          rx="3"
        />
        <text x="${(labelW + w + 6).toFixed(1)}" y="${yTop + barH / 2 + 4}"
          >${r.value}${r.note ? ` · ${r.note}` : ''}</text
        >`;
    })}
  </svg>`;
}
