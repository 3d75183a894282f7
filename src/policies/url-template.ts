/**
 * `target-url` templates: `$(var)` context variables and `{param}` operation parameters
 * (IBM "invoke": "target-url supports $(var) substitution … and {param} substitution").
 *
 * API properties are fixed per catalog, so they are substituted when the flow is compiled.
 * Whatever is left is read per request and inserted by its position, decided at compile time
 * (DESIGN §4, §6):
 * - at the very start of the template (`$(target-url)`, API Connect's dynamic routing) the
 *   value is a whole base URL set by the flow: it must parse as an absolute http(s) URL;
 * - in the host, it must be a plain host name (and port);
 * - in the path, it is decoded (every layer of percent-encoding) and refused when it holds a
 *   dot segment or a backslash, then encoded segment by segment, `/` kept;
 * - in the query or fragment, it is encoded whole, so it cannot add a parameter.
 * Finally the URL must keep the origin of the template and stay under its base path: the
 * path the template (or the dynamic base URL) spells out before the first value in the path.
 */
import { PorticoError } from '../errors.ts';
import type { FlowContext } from './types.ts';
import { refuseRequestChosenHost } from './invoke/target-host.ts';

type Position = 'url' | 'authority' | 'path' | 'query';

interface Literal {
  kind: 'literal';
  text: string;
}

interface Dynamic {
  kind: 'variable' | 'parameter';
  name: string;
  position: Position;
  /** `$(name)` or `{name}`, as written, for messages. */
  label: string;
  /** Checks and encodes a value for this part's position and kind; chosen at compile time. */
  insert: (value: string, label: string) => string;
}

export type UrlPart = Literal | Dynamic;

export interface CompiledUrl {
  /** The template after property substitution, for messages. */
  template: string;
  parts: UrlPart[];
  /** True when nothing is left to substitute per request. */
  constant: boolean;
  /**
   * The checked URL for this request. Throws a PorticoError: `GW_UNSAFE_TARGET_VALUE` (400)
   * when a value would leave the target's path or origin, `GW_INVALID_TARGET_URL` (502) when
   * the flow's own base URL or the result is not an http(s) URL.
   */
  resolve(ctx: FlowContext): URL;
}

const tokenPattern = /\$\(([^)]+)\)|\{([A-Za-z0-9_.-]+)\}/g;

/** Where a token at `index` of the template falls: the whole URL, the host, the path, or the query. */
function positionAt(template: string, index: number): Position {
  if (index === 0) return 'url';
  const prefix = template.slice(0, index);
  if (prefix.includes('?') || prefix.includes('#')) return 'query';
  const scheme = prefix.indexOf('://');
  if (scheme === -1) return 'path';
  return prefix.indexOf('/', scheme + 3) === -1 ? 'authority' : 'path';
}

// ── checking values for the path ─────────────────────────────────────────────────────────

// A dot segment, also as Tomcat reads `..;param`; a value is checked after each decoding.
const dotSegment = /(?:^|\/)\.\.?(?:[/;]|$)/;
const percentRun = /(?:%[0-9A-Fa-f]{2})+/g;
// IIS's non-standard `%u002e` form.
const percentU = /%u([0-9A-Fa-f]{4})/g;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// More layers than any client legitimately sends; deeper is refused rather than trusted.
const maxDecodingLayers = 4;

function fromHex(hex: string): string {
  return String.fromCharCode(Number.parseInt(hex, 16));
}

/** One layer of percent-decoding; undefined when the bytes are not UTF-8 (e.g. overlong `%c0%ae`). */
function decodeLayer(text: string): string | undefined {
  const plain = text.includes('%u') ? text.replace(percentU, (_whole, hex: string) => fromHex(hex)) : text;
  try {
    return decodeURIComponent(plain);
  } catch {
    // A `%` that starts no escape (`100%`) or bytes that are not UTF-8: decode escape by escape.
  }
  try {
    return plain.replace(percentRun, (run) => utf8.decode(Buffer.from(run.replaceAll('%', ''), 'hex')));
  } catch {
    return undefined;
  }
}

/**
 * Why a value cannot go into a URL path, or undefined when it can: it holds, raw or under any
 * layer of percent-encoding, a backslash (which WHATWG URL parsing and many servers read as
 * `/`) or a `.`/`..` segment (which `new URL()` and servers resolve, also as `%2e%2E`).
 */
export function pathValueProblem(value: string): string | undefined {
  let current = value;
  for (let layer = 0; ; layer++) {
    if (current.includes('\\')) return 'it contains a backslash';
    if (dotSegment.test(current)) return 'it contains a dot segment (. or ..)';
    if (!current.includes('%')) return undefined;
    const decoded = decodeLayer(current);
    if (decoded === undefined) return 'its percent-encoding is not UTF-8';
    if (decoded === current) return undefined;
    if (layer === maxDecodingLayers) return 'it is percent-encoded too many times';
    current = decoded;
  }
}

// ── inserting values ─────────────────────────────────────────────────────────────────────

function unsafe(label: string, reason: string): PorticoError {
  return new PorticoError('GW_UNSAFE_TARGET_VALUE', { name: label, reason });
}

function invalidTarget(reason: string): PorticoError {
  return new PorticoError('GW_INVALID_TARGET_URL', { reason });
}

/** The dynamic base URL (API Connect dynamic routing): used as it is, when it is http(s). */
function insertBaseUrl(value: string, label: string): string {
  const text = value.trim();
  if (text === '') throw invalidTarget(`${label} is empty`);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw invalidTarget(`${label} does not hold an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidTarget(`${label} holds a ${parsed.protocol} URL; only http and https are allowed`);
  }
  return text;
}

function insertHost(value: string, label: string): string {
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(value)) throw unsafe(label, 'it is not a host name');
  return value;
}

/** A decoded value in the path: checked, then each segment encoded, `/` kept. */
function insertPathValue(value: string, label: string): string {
  const problem = pathValueProblem(value);
  if (problem !== undefined) throw unsafe(label, problem);
  return value.split('/').map(encodeURIComponent).join('/');
}

// Anything outside RFC 3986 `pchar` and `/`, and a `%` that starts no escape.
const notPathChar = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]|%(?![0-9A-Fa-f]{2})/gu;

/** A path the gateway read from the request URL, already percent-encoded: checked, escapes kept. */
function insertEncodedPath(value: string, label: string): string {
  const problem = pathValueProblem(value);
  if (problem !== undefined) throw unsafe(label, problem);
  try {
    return value.replace(notPathChar, encodeURIComponent);
  } catch {
    throw unsafe(label, 'it is not valid text');
  }
}

/** `request.search` (`?a=1&b=2` or empty): a whole query string, so it starts with `?` wherever it lands. */
function insertSearch(value: string, label: string): string {
  if (value === '') return '';
  if (!value.startsWith('?')) throw unsafe(label, 'it is not a query string');
  return value.replaceAll('#', '%23');
}

function insertQueryValue(value: string): string {
  return encodeURIComponent(value);
}

// Values the gateway builds itself from the request URL: percent-encoded already.
const encodedPaths = new Set(['request.path', 'api.operation.path']);
const gatewayPaths = new Set([...encodedPaths, 'request.search']);

function inserterFor(position: Position, name: string | undefined): Dynamic['insert'] {
  if (position === 'url') return insertBaseUrl;
  if (position === 'authority') return insertHost;
  if (name === 'request.search') return insertSearch;
  if (position === 'query') return insertQueryValue;
  return name !== undefined && encodedPaths.has(name) ? insertEncodedPath : insertPathValue;
}

function stringify(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

// ── compiling and resolving ──────────────────────────────────────────────────────────────

function parseParts(expanded: string): UrlPart[] {
  const parts: UrlPart[] = [];
  let last = 0;
  let pathStarted = false;
  for (const match of expanded.matchAll(tokenPattern)) {
    const index = match.index ?? 0;
    if (index > last) parts.push({ kind: 'literal', text: expanded.slice(last, index) });
    let position = positionAt(expanded, index);
    // `http://host:port$(request.path)`: the gateway's own path and query start with `/` or `?`,
    // so they end the host wherever they stand, and everything after them is past it.
    if (position === 'authority' && (pathStarted || gatewayPaths.has(match[1]))) position = 'path';
    if (gatewayPaths.has(match[1])) pathStarted = true;
    const kind = match[1] !== undefined ? 'variable' : 'parameter';
    const name = match[1] ?? match[2];
    parts.push({ kind, name, position, label: match[0], insert: inserterFor(position, match[1]) });
    last = index + match[0].length;
  }
  if (last < expanded.length) parts.push({ kind: 'literal', text: expanded.slice(last) });
  return parts;
}

function parseTarget(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw invalidTarget('the URL built from the template is not valid');
  }
}

/** A scheme the template itself writes (not one a value brings per request) is known now: http(s) only. */
function requireHttp(url: URL, expanded: string): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`target-url "${expanded}" is a ${url.protocol} URL; the gateway calls http and https URLs only`);
}

/**
 * Compiles a target URL. `properties` are substituted now; every other value is read per
 * request and inserted by its position (see the file's comment). Throws when the template's
 * own base (everything before the first value in the path) is not a URL.
 */
export function compileUrlTemplate(template: string, properties: Record<string, string>): CompiledUrl {
  // Properties first: they may themselves hold a whole base URL.
  const expanded = template.replace(/\$\(([^)]+)\)/g, (whole, name: string) => {
    const key = name.startsWith('api.properties.') ? name.slice('api.properties.'.length) : name;
    return Object.hasOwn(properties, key) ? properties[key] : whole;
  });
  const parts = parseParts(expanded);
  refuseRequestChosenHost(expanded, parts);
  const constant = parts.every((p) => p.kind === 'literal');
  if (constant) {
    requireHttp(new URL(expanded), expanded);
    return { template: expanded, parts, constant, resolve: () => new URL(expanded) };
  }
  // The base: everything before the first value in the path or query. Known now unless a
  // value makes up the scheme or host.
  const found = parts.findIndex((p) => p.kind !== 'literal' && (p.position === 'path' || p.position === 'query'));
  const baseEnd = found === -1 ? parts.length : found;
  const constantBase = parts.slice(0, baseEnd).every((p) => p.kind === 'literal');
  let fixedBase: URL | undefined;
  if (constantBase) {
    const prefix = parts
      .slice(0, baseEnd)
      .map((p) => (p as Literal).text)
      .join('');
    try {
      fixedBase = new URL(prefix);
    } catch {
      throw new Error(`target-url "${expanded}" does not start with an absolute URL`);
    }
    requireHttp(fixedBase, expanded);
  }
  const firstPathLabel = baseEnd < parts.length ? (parts[baseEnd] as Dynamic).label : 'the target URL';

  return {
    template: expanded,
    parts,
    constant,
    resolve(ctx: FlowContext): URL {
      let href = '';
      let prefix = '';
      for (let i = 0; i < parts.length; i++) {
        if (i === baseEnd) prefix = href;
        const part = parts[i];
        if (part.kind === 'literal') href += part.text;
        else href += part.insert(stringify(readValue(part, ctx)), part.label);
      }
      if (baseEnd === parts.length) prefix = href;
      const target = parseTarget(href);
      const base = fixedBase ?? parseTarget(prefix);
      if (target.origin !== base.origin || !target.pathname.startsWith(base.pathname)) {
        throw unsafe(firstPathLabel, "the URL would leave the target's base path or host");
      }
      return target;
    },
  };
}

function readValue(part: Dynamic, ctx: FlowContext): unknown {
  return part.kind === 'parameter' ? ctx.request.parameters[part.name] : ctx.get(part.name);
}
