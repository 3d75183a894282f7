/** Small HTML building blocks shared by the portal and the console pages. */
import { html, join } from './html.ts';
import type { SafeHtml } from './html.ts';

/** The hidden CSRF field every form carries. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}" />`;
}

export type NoticeKind = 'error' | 'ok' | 'warn' | 'info';

/** A message box; errors are announced to screen readers at once. */
export function notice(kind: NoticeKind, content: unknown): SafeHtml {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice ${kind}" role="${role}">${content}</div>`;
}

const stateLabels: Record<string, string> = {
  pending: 'Pending approval',
  active: 'Active',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
  online: 'Online',
  offline: 'Offline',
  staged: 'Staged',
  published: 'Published',
  deprecated: 'Deprecated',
  retired: 'Retired',
  archived: 'Archived',
};

/** A coloured state badge with words (colour is never the only signal). */
export function statePill(state: string): SafeHtml {
  return html`<span class="pill ${state}">${stateLabels[state] ?? state}</span>`;
}

/** A breadcrumb trail; the last item is the current page. */
export function breadcrumbs(items: Array<[label: string, href?: string]>): SafeHtml {
  const last = items.length - 1;
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb">
    <ol>
      ${items.map(([label, href], i) =>
        i === last || !href
          ? html`<li${i === last ? html` aria-current="page"` : ''}>${label}</li>`
          : html`<li><a href="${href}">${label}</a></li>`,
      )}
    </ol>
  </nav>`;
}

/** A read-only value with a Copy button (the button needs the script; the value can be selected by hand). */
export function copyField(id: string, label: string, value: string): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${label}</label>
    <div class="copy-row">
      <input type="text" id="${id}" value="${value}" readonly spellcheck="false" autocomplete="off" class="mono" />
      <button type="button" class="button secondary small" data-copy-target="${id}">Copy</button
      ><span class="copy-status hint" aria-live="polite"></span>
    </div>
  </div>`;
}

/** A POST form made of a single button. */
export function buttonForm(
  action: string,
  csrf: string,
  label: string,
  options: {
    kind?: 'secondary' | 'danger';
    confirm?: string;
    hidden?: Record<string, string>;
    small?: boolean;
  } = {},
): SafeHtml {
  const classes = join(['button', options.kind, options.small ? 'small' : undefined].filter(Boolean), ' ');
  return html`<form method="post" action="${action}" ${options.confirm ? html`data-confirm="${options.confirm}"` : ''}>
    ${csrfField(csrf)}${Object.entries(options.hidden ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
    )}<button type="submit" class="${classes}">${label}</button>
  </form>`;
}

/** A table with a caption (visually hidden when `hideCaption`), header cells and rows of cells. */
export function table(
  caption: string,
  headers: string[],
  rows: unknown[][],
  options: { hideCaption?: boolean; numeric?: number[] } = {},
): SafeHtml {
  const numeric = new Set(options.numeric ?? []);
  return html`<div class="table-wrap" tabindex="0"><table><caption${options.hideCaption ? html` class="visually-hidden"` : ''}>${caption}</caption>
<thead><tr>${headers.map((h, i) => html`<th scope="col" ${numeric.has(i) ? html`class="num"` : ''}>${h}</th>`)}</tr></thead>
<tbody>${rows.map(
    (row) =>
      html`<tr>
        ${row.map((cell, i) => html`<td${numeric.has(i) ? html` class="num"` : ''}>${cell}</td>`)}
      </tr>`,
  )}</tbody></table></div>`;
}

/** A date-time for people, in UTC (the server does not know the reader's zone). */
export function when(iso: string | number): SafeHtml {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return html``;
  return html`<time datetime="${date.toISOString()}">${date.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}
