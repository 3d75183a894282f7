/**
 * The flow context: API Connect's context variables for one request (IBM "API Connect context
 * variables"). Variables form one tree (`request`, `message`, `api`, `client`, `plan`,
 * `product`, `error`, and user variables such as `xyz_response`) addressed with dot or bracket
 * notation. Header names are case-insensitive. A body still held as raw bytes is parsed on its
 * first read, so a pass-through flow never parses what it only forwards.
 */
import type { Logger } from 'pino';
import { RawBody } from '../policies/types.ts';
import type { CallerLimits, FlowContext, MessageVar, RequestVar } from '../policies/types.ts';

type Tree = Record<string, unknown>;

const pathCache = new Map<string, string[]>();
const pathCacheLimit = 10_000;

/** Splits `request.headers['Content-Type'].x` into segments, cached (names come from definitions). */
export function splitVariablePath(name: string): string[] {
  let segments = pathCache.get(name);
  if (segments !== undefined) return segments;
  segments = [];
  const pattern = /([^.[\]]+)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+))\s*\]/g;
  for (const match of name.matchAll(pattern)) {
    segments.push(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '');
  }
  if (pathCache.size < pathCacheLimit) pathCache.set(name, segments);
  return segments;
}

/** Parses raw bytes by content type: JSON → value; XML and text → string; anything else → bytes. */
export function parseRawBody(raw: RawBody): unknown {
  if (raw.bytes.length === 0) return '';
  const type = (raw.contentType ?? '').toLowerCase();
  const text = raw.bytes.toString('utf8');
  if (type.includes('json') || (type === '' && /^\s*[[{]/.test(text))) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (type === '' || type.startsWith('text/') || type.includes('xml') || type.includes('x-www-form-urlencoded')) return text;
  return raw.bytes;
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof RawBody);
}

/** Reads `key` of `node`, case-insensitively when `node` is a header bag. */
function readKey(node: Tree, key: string, caseless: boolean): unknown {
  if (!caseless) return node[key];
  const lower = key.toLowerCase();
  if (lower in node) return node[lower];
  for (const name of Object.keys(node)) if (name.toLowerCase() === lower) return node[name];
  return undefined;
}

function isHeaderBag(segments: string[], index: number): boolean {
  return index > 0 && segments[index - 1] === 'headers';
}

export interface ContextInit {
  request: RequestVar;
  message: MessageVar;
  api: Tree;
  properties: Record<string, string>;
  log: Logger;
  operation: { id: string | undefined; path: string; verb: string };
  signal: AbortSignal;
  limits?: CallerLimits;
}

/** One request's context. */
export class GatewayContext implements FlowContext {
  readonly vars: Tree;
  readonly request: RequestVar;
  readonly properties: Record<string, string>;
  readonly log: Logger;
  readonly operation: { id: string | undefined; path: string; verb: string };
  readonly signal: AbortSignal;
  readonly limits: CallerLimits | undefined;
  backendMs = 0;

  constructor(init: ContextInit) {
    this.request = init.request;
    this.properties = init.properties;
    this.log = init.log;
    this.operation = init.operation;
    this.signal = init.signal;
    this.limits = init.limits;
    this.vars = { request: init.request, message: init.message, api: init.api };
  }

  get message(): MessageVar {
    return this.vars.message as MessageVar;
  }

  get(name: string): unknown {
    const segments = splitVariablePath(name);
    let node: unknown = this.vars;
    for (let i = 0; i < segments.length; i++) {
      if (node instanceof RawBody) node = parseRawBody(node);
      if (!isTree(node)) return undefined;
      const key = segments[i];
      let value = readKey(node, key, isHeaderBag(segments, i));
      if (value instanceof RawBody) {
        // Cache the parsed form where it lives so later reads and writes see one value.
        value = parseRawBody(value);
        node[key] = value;
      }
      node = value;
    }
    return node;
  }

  set(name: string, value: unknown): void {
    const segments = splitVariablePath(name);
    if (segments.length === 0) return;
    let node: Tree = this.vars;
    for (let i = 0; i < segments.length - 1; i++) {
      const key = segments[i];
      let next = node[key];
      if (next instanceof RawBody) next = parseRawBody(next);
      if (!isTree(next)) {
        next = {};
      }
      node[key] = next;
      node = next as Tree;
    }
    const last = segments[segments.length - 1];
    if (isHeaderBag(segments, segments.length - 1)) {
      removeCaseless(node, last);
      node[last.toLowerCase()] = value === undefined || value === null ? '' : String(value);
      return;
    }
    node[last] = value;
  }

  clear(name: string): void {
    const segments = splitVariablePath(name);
    if (segments.length === 0) return;
    let node: unknown = this.vars;
    for (let i = 0; i < segments.length - 1; i++) {
      if (!isTree(node)) return;
      node = readKey(node, segments[i], isHeaderBag(segments, i));
    }
    if (!isTree(node)) return;
    const last = segments[segments.length - 1];
    if (isHeaderBag(segments, segments.length - 1)) removeCaseless(node, last);
    else delete node[last];
  }
}

function removeCaseless(node: Tree, key: string): void {
  const lower = key.toLowerCase();
  for (const name of Object.keys(node)) if (name.toLowerCase() === lower) delete node[name];
}

/** A fresh, empty message variable. */
export function emptyMessage(): MessageVar {
  return { headers: {}, body: undefined, status: { code: 200, reason: 'OK' } };
}
