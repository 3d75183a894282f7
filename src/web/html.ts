/**
 * A tiny HTML template helper: `html` is a tagged template in which every interpolated value
 * is escaped unless it is already `SafeHtml` (the output of another `html` call). Arrays are
 * joined; `null`, `undefined` and `false` render nothing, so `cond && html\`…\`` reads well.
 */

/** HTML that has been escaped (or built only from escaped parts). */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => entities[c]);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** Builds escaped HTML: `html\`<p>${name}</p>\``. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** Joins fragments with a separator, escaping any that are plain text. */
export function join(parts: unknown[], separator = ''): SafeHtml {
  return new SafeHtml(parts.map(render).join(separator));
}

/** A path built from fixed segments and escaped (URI-encoded) variable parts. */
export function path(...segments: Array<string | number>): string {
  return '/' + segments.map((s) => encodeURIComponent(String(s))).join('/');
}
