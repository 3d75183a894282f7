/**
 * The flow context: API Connect's context variables for one request (IBM "API Connect context
 * variables"). Variables form one tree (`request`, `message`, `api`, `client`, `plan`,
 * `product`, `error`, and user variables such as `xyz_response`) addressed with dot or bracket
 * notation. Header names are case-insensitive. A body still held as raw bytes is parsed on its
 * first read, so a pass-through flow never parses what it only forwards.
 *
 * Names may come from a tenant's script, so the tree is hardened (DESIGN §6): objects the
 * context creates have no prototype, reads see own properties only, a `__proto__`,
 * `prototype` or `constructor` segment reads as undefined and is refused for writes, names
 * are bounded in length, and objects shared with other requests (the snapshot's `api.*`
 * trees, parameter defaults) are frozen and copied into this request's tree before a write
 * under them (copy-on-write), so a write is seen by this request only.
 */
import { isUtf8 } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PorticoError } from '../errors.ts';
import { AssemblyError, RawBody } from '../policies/types.ts';
import type { CallerLimits, FlowContext, MessageVar, RequestVar } from '../policies/types.ts';
import { prototypeFree, prototypeSegment, setOwn, splitPath } from '../policies/variable-names.ts';
import { consumerGone } from './response.ts';

type Tree = Record<string, unknown>;

/** The longest variable name accepted, in characters (API Connect's names are a few dozen). */
export const maxVariableNameLength = 1024;

/** A variable name refused by the context: `RuntimeError` for a catch block, 500 if uncaught. */
export class VariableError extends AssemblyError {
  readonly code = 'GW_INVALID_VARIABLE';

  constructor(name: string, action: 'read' | 'written' | 'cleared', reason: string) {
    const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    super(
      'RuntimeError',
      new PorticoError('GW_INVALID_VARIABLE', { name: JSON.stringify(shown), action, reason }).message,
    );
  }
}

interface VariablePath {
  segments: readonly string[];
  /** The segment that names a prototype link, if any. */
  prototypeKey: string | undefined;
}

// Names from definitions repeat on every request; a script can make up any number of them.
// So the cache holds short names only and starts over past a budget of (estimated) bytes:
// a name and its segments at two bytes a character, plus the entry's own objects.
const pathCache = new Map<string, VariablePath>();
const cachedNameLength = 256;
const pathCacheBudgetBytes = 4 * 1024 * 1024;
const entryOverheadBytes = 200;
let pathCacheBytes = 0;

/** Byte budget and usage of the path cache (for tests and diagnostics). */
export function pathCacheUsage(): { entries: number; bytes: number; budgetBytes: number } {
  return { entries: pathCache.size, bytes: pathCacheBytes, budgetBytes: pathCacheBudgetBytes };
}

/**
 * Splits a variable name into segments, cached; a name over {@link maxVariableNameLength}
 * characters is a {@link VariableError}.
 */
export function parseVariablePath(name: string, action: 'read' | 'written' | 'cleared' = 'read'): VariablePath {
  const cached = pathCache.get(name);
  if (cached !== undefined) return cached;
  if (name.length > maxVariableNameLength) {
    throw new VariableError(name, action, `the name is longer than ${maxVariableNameLength} characters`);
  }
  const segments = Object.freeze(splitPath(name));
  const path: VariablePath = { segments, prototypeKey: prototypeSegment(segments) };
  if (name.length <= cachedNameLength) {
    const cost = 4 * name.length + entryOverheadBytes;
    if (pathCacheBytes + cost > pathCacheBudgetBytes) {
      pathCache.clear();
      pathCacheBytes = 0;
    }
    pathCache.set(name, path);
    pathCacheBytes += cost;
  }
  return path;
}

/** Parses raw bytes by type: JSON → value; XML, text → string; else, or not UTF-8 (would be changed), → bytes. */
export function parseRawBody(raw: RawBody): unknown {
  if (raw.bytes.length === 0) return '';
  if (!isUtf8(raw.bytes)) return raw.bytes;
  const type = (raw.contentType ?? '').toLowerCase();
  const text = raw.bytes.toString('utf8');
  if (jsonLike(type, text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (type === '' || type.startsWith('text/') || type.includes('xml') || type.includes('x-www-form-urlencoded'))
    return text;
  return raw.bytes;
}

/**
 * The text {@link parseRawBody} hands to `JSON.parse` (its value is that parse, or the text itself
 * when it does not parse); undefined for a body it reads otherwise.
 */
export function rawJsonText(raw: RawBody): string | undefined {
  if (raw.bytes.length === 0 || !isUtf8(raw.bytes)) return undefined;
  const text = raw.bytes.toString('utf8');
  return jsonLike((raw.contentType ?? '').toLowerCase(), text) ? text : undefined;
}

function jsonLike(type: string, text: string): boolean {
  return type.includes('json') || (type === '' && /^\s*[[{]/.test(text));
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof RawBody);
}

function isRecord(value: unknown): value is Tree {
  return isTree(value) && !Array.isArray(value);
}

/** An object the context creates: no prototype, so no key can reach one. */
function newTree(): Tree {
  return prototypeFree<Tree>();
}

/** Reads own `key` of `node`, case-insensitively when `node` is a header bag; inherited keys read as undefined. */
function readKey(node: Tree, key: string, caseless: boolean): unknown {
  if (!caseless) return Object.hasOwn(node, key) ? node[key] : undefined;
  const lower = key.toLowerCase();
  if (Object.hasOwn(node, lower)) return node[lower];
  for (const name of Object.keys(node)) if (name.toLowerCase() === lower) return node[name];
  return undefined;
}

/**
 * Writes own `key` of `node`. A list grows by at most one item at a time: an index far past
 * its end (or a `length`) would make a sparse list that costs nothing to write and gigabytes
 * to serialize.
 */
function writeKey(node: Tree, key: string, value: unknown, name: string): void {
  if (Array.isArray(node) && !(/^\d+$/.test(key) && Number(key) <= node.length)) {
    throw new VariableError(name, 'written', `"${key}" is not an index of the list (0 to ${node.length})`);
  }
  setOwn(node, key, value);
}

/** A writable, prototype-free copy of a frozen (shared) tree, one level deep. */
function writableCopy(tree: Tree): Tree {
  if (Array.isArray(tree)) return [...(tree as unknown[])] as unknown as Tree;
  const copy = newTree();
  for (const key of Object.keys(tree)) copy[key] = tree[key];
  return copy;
}

// Trees shared by every request (the snapshot's `api.*` objects, parameter defaults) are
// frozen once, the first time a request sees them; the context copies them before writing.
const frozenTrees = new WeakSet<object>();

function freezeShared(value: unknown): void {
  if (
    typeof value !== 'object' ||
    value === null ||
    frozenTrees.has(value) ||
    Buffer.isBuffer(value) ||
    value instanceof RawBody
  )
    return;
  frozenTrees.add(value);
  for (const key of Object.keys(value)) freezeShared((value as Tree)[key]);
  Object.freeze(value);
}

function isHeaderBag(segments: readonly string[], index: number): boolean {
  return index > 0 && segments[index - 1] === 'headers';
}

/**
 * A header bag for `message.headers` and invoke outputs: own fields of `source` only, in an
 * object without a prototype (Node's `req.headers` has one, and inherits from it).
 */
export function headerBag(source: Record<string, unknown>): Record<string, string> {
  const bag = newTree();
  for (const name of Object.keys(source)) setOwn(bag, name, source[name]);
  return bag as Record<string, string>;
}

export interface ContextInit {
  request: RequestVar;
  message: MessageVar;
  api: Tree;
  properties: Record<string, string>;
  log: Logger;
  operation: { id: string | undefined; path: string; verb: string };
  signal: AbortSignal;
  /** The consumer's response, whose close before the answer means the consumer went away (none outside a request). */
  response?: ServerResponse;
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
  private readonly response: ServerResponse | undefined;

  constructor(init: ContextInit) {
    this.request = init.request;
    this.properties = init.properties;
    this.log = init.log;
    this.operation = init.operation;
    this.signal = init.signal;
    this.response = init.response;
    this.limits = init.limits;
    // `api` is the snapshot's tree for the operation, shared by its requests (frozen once).
    freezeShared(init.api);
    for (const key of Object.keys(init.request.parameters)) freezeShared(init.request.parameters[key]);
    this.vars = newTree();
    this.vars.request = init.request;
    this.vars.message = init.message;
    this.vars.api = init.api;
  }

  /**
   * `message` as the gateway answers it. A script may clear it or overwrite its parts with
   * anything; what it broke reads as empty (no headers, 200 OK) rather than failing the answer.
   */
  get message(): MessageVar {
    let message = this.vars.message;
    if (!isRecord(message)) this.vars.message = message = emptyMessage();
    const shaped = message as MessageVar;
    if (!isRecord(shaped.headers)) shaped.headers = headerBag({});
    if (!isRecord(shaped.status)) shaped.status = { code: 200, reason: 'OK' };
    return shaped;
  }

  // A gateway stopping past its grace closes the connections itself: that is its stop signal's
  // case (ConnectionError 499, as before), not a consumer who left.
  get consumerGone(): boolean {
    return this.response !== undefined && !this.signal.aborted && consumerGone(this.response);
  }

  // The listener goes straight onto the response, which lives as long as this request: nothing is
  // allocated or listened to for a request whose flow never waits on a backend.
  watchConsumer(listener: () => void): void {
    this.response?.on('close', listener);
  }

  unwatchConsumer(listener: () => void): void {
    this.response?.removeListener('close', listener);
  }

  get(name: string): unknown {
    const { segments, prototypeKey } = parseVariablePath(name);
    if (prototypeKey !== undefined) return undefined;
    let node: unknown = this.vars;
    for (let i = 0; i < segments.length; i++) {
      if (node instanceof RawBody) node = parseRawBody(node);
      if (!isTree(node)) return undefined;
      const key = segments[i];
      let value = readKey(node, key, isHeaderBag(segments, i));
      if (value instanceof RawBody) {
        // Cache the parsed form where it lives so later reads and writes see one value.
        value = parseRawBody(value);
        if (!Object.isFrozen(node)) node[key] = value;
      }
      node = value;
    }
    return node;
  }

  set(name: string, value: unknown): void {
    const segments = this.writableSegments(name, 'written');
    if (segments.length === 0) return;
    const node = this.parentOf(name, segments, true)!;
    const last = segments[segments.length - 1];
    if (isHeaderBag(segments, segments.length - 1)) {
      removeCaseless(node, last);
      const field = last.toLowerCase();
      // Header values are text, but Set-Cookie lines are never folded (RFC 6265 §3): a list stays one.
      const text = field === 'set-cookie' && Array.isArray(value) ? value.map(String) : String(value ?? '');
      writeKey(node, field, text, name);
      return;
    }
    writeKey(node, last, value, name);
  }

  clear(name: string): void {
    const segments = this.writableSegments(name, 'cleared');
    if (segments.length === 0) return;
    const node = this.parentOf(name, segments, false);
    if (node === undefined) return;
    const last = segments[segments.length - 1];
    if (isHeaderBag(segments, segments.length - 1)) removeCaseless(node, last);
    else delete node[last];
  }

  private writableSegments(name: string, action: 'written' | 'cleared'): readonly string[] {
    const { segments, prototypeKey } = parseVariablePath(name, action);
    if (prototypeKey !== undefined)
      throw new VariableError(name, action, `the segment "${prototypeKey}" would reach a prototype`);
    return segments;
  }

  /**
   * The tree that holds the last segment, writable by this request: raw bodies on the way are
   * parsed in place, shared (frozen) trees copied into this request's tree, and missing
   * trees created when `create` (else undefined).
   */
  private parentOf(name: string, segments: readonly string[], create: boolean): Tree | undefined {
    let node: Tree = this.vars;
    for (let i = 0; i < segments.length - 1; i++) {
      const key = segments[i];
      const existing = readKey(node, key, false);
      let next = existing instanceof RawBody ? parseRawBody(existing) : existing;
      if (!isTree(next)) {
        if (!create) return undefined;
        next = newTree();
      } else if (Object.isFrozen(next)) {
        next = writableCopy(next);
      }
      if (next !== existing) writeKey(node, key, next, name);
      node = next as Tree;
    }
    return node;
  }
}

function removeCaseless(node: Tree, key: string): void {
  const lower = key.toLowerCase();
  for (const name of Object.keys(node)) if (name.toLowerCase() === lower) delete node[name];
}

/** A fresh, empty message variable. */
export function emptyMessage(): MessageVar {
  return { headers: headerBag({}), body: undefined, status: { code: 200, reason: 'OK' } };
}
