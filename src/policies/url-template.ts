/**
 * `target-url` templates: `$(var)` context variables and `{param}` operation parameters
 * (IBM "invoke": "target-url supports $(var) substitution … and {param} substitution").
 *
 * API properties are fixed per catalog, so they are substituted when the flow is compiled.
 * Whatever is left is read per request and encoded for its position (DESIGN §4): a value in
 * the query cannot add a parameter, a value in the path cannot climb out of it or start a
 * query, and a value in the host must be a plain host name — so a consumer's value can never
 * change the target host, path or parameters.
 */
import type { FlowContext } from './types.ts';

type Position = 'authority' | 'path' | 'query';

interface Literal {
  kind: 'literal';
  text: string;
}

interface Dynamic {
  kind: 'variable' | 'parameter';
  name: string;
  position: Position;
}

export type UrlPart = Literal | Dynamic;

export interface CompiledUrl {
  /** The template after property substitution, for messages. */
  template: string;
  parts: UrlPart[];
  /** True when nothing is left to substitute per request. */
  constant: boolean;
  render(ctx: FlowContext): string;
}

const tokenPattern = /\$\(([^)]+)\)|\{([A-Za-z0-9_.-]+)\}/g;

/** Where a character offset of a URL falls: before the path, in the path, or in the query. */
function positionAt(prefix: string): Position {
  if (prefix.includes('?') || prefix.includes('#')) return 'query';
  const scheme = prefix.indexOf('://');
  if (scheme === -1) return 'path';
  return prefix.indexOf('/', scheme + 3) === -1 ? 'authority' : 'path';
}

/** Encodes a path value: segments encoded, `/` kept, dot segments refused. */
function encodePathValue(value: string): string {
  return value
    .split('/')
    .map((segment) => {
      if (segment === '..' || segment === '.') return encodeURIComponent(segment).replace(/\./g, '%2E');
      return encodeURIComponent(segment);
    })
    .join('/');
}

function encodeFor(position: Position, value: string, name: string): string {
  if (position === 'query') return encodeURIComponent(value);
  if (position === 'path') return encodePathValue(value);
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(value)) {
    throw new Error(`the value of ${name} is not a host name and cannot be used in the target host`);
  }
  return value;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Compiles a target URL. `properties` are substituted now; `trustedVariables` (such as
 * `request.path` and `request.search`, which the gateway itself normalised) are inserted as
 * they are; every other value is encoded for its position.
 */
export function compileUrlTemplate(template: string, properties: Record<string, string>): CompiledUrl {
  // Properties first: they may themselves hold a whole base URL.
  const expanded = template.replace(/\$\(([^)]+)\)/g, (whole, name: string) => {
    const key = name.startsWith('api.properties.') ? name.slice('api.properties.'.length) : name;
    return Object.hasOwn(properties, key) ? properties[key] : whole;
  });
  const parts: UrlPart[] = [];
  let last = 0;
  for (const match of expanded.matchAll(tokenPattern)) {
    const index = match.index ?? 0;
    if (index > last) parts.push({ kind: 'literal', text: expanded.slice(last, index) });
    const position = positionAt(expanded.slice(0, index));
    if (match[1] !== undefined) parts.push({ kind: 'variable', name: match[1], position });
    else parts.push({ kind: 'parameter', name: match[2], position });
    last = index + match[0].length;
  }
  if (last < expanded.length) parts.push({ kind: 'literal', text: expanded.slice(last) });
  const constant = parts.every((p) => p.kind === 'literal');
  return {
    template: expanded,
    parts,
    constant,
    render: constant ? () => expanded : (ctx) => renderParts(parts, ctx),
  };
}

// Values the gateway builds itself from the parsed request URL: already encoded, path-only.
const preEncoded = new Set(['request.path', 'request.search', 'api.operation.path', 'request.search-params']);

function renderParts(parts: UrlPart[], ctx: FlowContext): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'literal') {
      out += part.text;
    } else if (part.kind === 'parameter') {
      out += encodeFor(part.position, stringify(ctx.request.parameters[part.name]), `{${part.name}}`);
    } else if (preEncoded.has(part.name)) {
      out += stringify(ctx.get(part.name));
    } else {
      out += encodeFor(part.position, stringify(ctx.get(part.name)), `$(${part.name})`);
    }
  }
  return out;
}
