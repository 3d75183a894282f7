/**
 * An API's assembly as a readable tree: each policy with its title and the one detail a
 * provider looks for (an invoke's verb and URL, a switch case's condition, an
 * operation-switch case's operations), with nested cases, `otherwise`, `catch` and `finally`.
 */
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** The one-line detail of a policy. */
function detail(kind: string, config: Json): string {
  switch (kind) {
    case 'invoke':
    case 'proxy':
      return `${text(config.verb) || 'keep verb'} ${text(config['target-url'])}${config.output ? ` → ${text(config.output)}` : ''}`;
    case 'map': {
      const inputs = isObject(config.inputs)
        ? Object.values(config.inputs)
            .filter(isObject)
            .map((i) => text(i.variable))
        : [];
      const outputs = isObject(config.outputs)
        ? Object.values(config.outputs)
            .filter(isObject)
            .map((o) => text(o.variable))
        : [];
      const actions = Array.isArray(config.actions) ? config.actions.length : 0;
      return `${inputs.join(', ') || '—'} → ${outputs.join(', ') || '—'} (${actions} action${actions === 1 ? '' : 's'})`;
    }
    case 'set-variable':
      return (Array.isArray(config.actions) ? config.actions : [])
        .filter(isObject)
        .map(
          (a) =>
            `${a.set ? `set ${text(a.set)}` : a.add ? `add ${text(a.add)}` : `clear ${text(a.clear)}`}${a.value !== undefined ? ` = ${JSON.stringify(a.value)}` : ''}`,
        )
        .join('; ');
    case 'gatewayscript': {
      const source = text(config.source);
      return source ? `${source.split('\n').length} line script` : '';
    }
    case 'throw':
      return `${text(config.name)}${config.message ? `: ${text(config.message)}` : ''}`;
    case 'if':
      return `if ${text(config.condition)}`;
    case 'log':
      return `mode ${text(config.mode) || 'gather-and-send'}`;
    case 'validate':
      return text(config.definition);
    case 'parse':
      return text(config['parse-settings-reference'] ? 'with settings' : (config.input ?? ''));
    default:
      return '';
  }
}

function operationsLabel(operations: unknown): string {
  if (!Array.isArray(operations)) return '';
  return operations.map((o) => (isObject(o) ? `${text(o.verb).toUpperCase()} ${text(o.path)}` : text(o))).join(', ');
}

function caseBranches(kind: string, config: Json): SafeHtml[] {
  const out: SafeHtml[] = [];
  const cases = Array.isArray(config.case) ? config.case.filter(isObject) : [];
  for (const c of cases) {
    if (Array.isArray(c.otherwise)) {
      out.push(html`<li><span class="case-label">otherwise</span>${steps(c.otherwise)}</li>`);
      continue;
    }
    const label =
      kind === 'operation-switch' ? `operations: ${operationsLabel(c.operations)}` : `case ${text(c.condition)}`;
    out.push(html`<li><span class="case-label">${label}</span>${steps(c.execute)}</li>`);
  }
  if (Array.isArray(config.otherwise))
    out.push(html`<li><span class="case-label">otherwise</span>${steps(config.otherwise)}</li>`);
  if (kind === 'if' && Array.isArray(config.execute))
    out.push(html`<li><span class="case-label">then</span>${steps(config.execute)}</li>`);
  if (kind === 'if' && Array.isArray(config.else))
    out.push(html`<li><span class="case-label">else</span>${steps(config.else)}</li>`);
  return out;
}

function step(entry: unknown): SafeHtml {
  if (!isObject(entry)) return html`<li><span class="step">(not a policy)</span></li>`;
  const kind = Object.keys(entry)[0] ?? '?';
  const config = isObject(entry[kind]) ? (entry[kind] as Json) : {};
  const branches = caseBranches(kind, config);
  const title = text(config.title);
  const info = detail(kind, config);
  return html`<li>
    <span class="step"
      ><span class="kind">${kind}</span>${title && title !== kind ? html`<span>${title}</span>` : ''}${
        info ? html`<span class="detail">${info}</span>` : ''
      }</span
    >${
      branches.length > 0
        ? html`<ul>
            ${branches}
          </ul>`
        : ''
    }
  </li>`;
}

function steps(list: unknown): SafeHtml {
  if (!Array.isArray(list) || list.length === 0)
    return html`<ul>
      <li><span class="step">(no steps)</span></li>
    </ul>`;
  return html`<ul>
    ${list.map(step)}
  </ul>`;
}

/** The assembly of an API document as nested lists; empty text when it has none. */
export function assemblyFlow(document: Json): SafeHtml {
  const configuration = isObject(document['x-ibm-configuration']) ? document['x-ibm-configuration'] : {};
  const assembly = isObject(configuration.assembly) ? configuration.assembly : undefined;
  if (!assembly) return html`<p>This API has no assembly: calls are proxied as defined.</p>`;
  const catches = Array.isArray(assembly.catch) ? assembly.catch.filter(isObject) : [];
  return html`<h3>Execute</h3>
    <div class="flow">${steps(assembly.execute)}</div>
    ${
      catches.length > 0
        ? html`<h3>Catch</h3>
            <ul class="flow">
              ${catches.map((c) =>
                Array.isArray(c.default)
                  ? html`<li><span class="case-label">default</span>${steps(c.default)}</li>`
                  : html`<li>
                      <span class="case-label"
                        >errors: ${(Array.isArray(c.errors) ? c.errors : []).map(text).join(', ')}</span
                      >${steps(c.execute)}
                    </li>`,
              )}
            </ul>`
        : ''
    }
    ${
      Array.isArray(assembly.finally)
        ? html`<h3>Finally</h3>
            <div class="flow">${steps(assembly.finally)}</div>`
        : ''
    }`;
}
