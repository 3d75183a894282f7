/** The catalog a console page shows, and the form that switches it when the org has several. */
import { html } from '../../web/html.ts';
import type { SignedInConsole } from './context.ts';

/** A console path under the page's catalog (`/console/catalogs/<catalog><rest>`). */
export function catalogPath(context: SignedInConsole, rest: string): string {
  return `/console/catalogs/${encodeURIComponent(context.catalog.name)}${rest}`;
}

/** The catalog shown, with a picker when there is more than one. */
export function catalogPicker(context: SignedInConsole, action: string) {
  if (context.catalogs.length < 2)
    return html`<p class="hint">
      Catalog: <strong>${context.catalog.title}</strong> (<code>${context.catalog.name}</code>)
    </p>`;
  return html`<form method="get" action="${action}" class="filters">
    <div class="field">
      <label for="catalog">Catalog</label>
      <select id="catalog" name="catalog">
        ${context.catalogs.map((c) => html`<option value="${c.name}" ${c.id === context.catalog.id ? html`selected` : ''}>${c.title}</option>`)}
      </select>
    </div>
    <button type="submit" class="button secondary">Show</button>
  </form>`;
}
