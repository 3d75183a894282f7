/**
 * Read-ahead (issue 18): the variables a script names literally (`context.get('x')`,
 * `apim.getvariable('x')`, `context.request.verb`, `request.header.get('X')`,
 * `message.body.readAsJSON`, …) are found once, at publish. When a run is handed to a worker,
 * the gateway thread reads them from the request's context and sends their values with the run,
 * so the script reads them without a round trip. The worker serves a read from them only until
 * the script's first write (set, add, clear): from then on every read goes to the gateway
 * thread, after the writes before it, so a script always sees its own writes, whatever the
 * names (header names are case-insensitive, and one variable can hold another's tree).
 *
 * Reading ahead must change nothing a read would not: a body still held as raw bytes is
 * parsed, and the parsed form cached in the context, by its first read (context.ts). So a
 * name whose read would cache a parsed body is read, then the raw bytes are put back; only
 * when the script really reads it does {@link ReadAhead.touched} cache the parsed form, as the
 * read would have. A name the read-ahead cannot handle this way is simply not read ahead.
 */
import { parseVariablePath, rawJsonText } from '../../gateway/context.ts';
import { rawJsonMark } from './prelude.ts';
import { RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';

/** At most this many names per script, and this many characters of values per run, are read ahead. */
export const readAheadLimits = { names: 32, chars: 256 * 1024 };

/** One name read ahead: its JSON text (undefined: reads as undefined), and whether a read must be reported. */
export type ReadAheadEntry = [name: string, json: string | undefined, touch: boolean];

/** The prelude's getters (prelude.ts) and the variable each one reads. */
const requestGetters: Readonly<Record<string, string>> = {
  verb: 'request.verb',
  method: 'request.verb',
  uri: 'request.uri',
  path: 'request.path',
  search: 'request.search',
  headers: 'request.headers',
  parameters: 'request.parameters',
  contentType: 'request.content-type',
};
const messageGetters: Readonly<Record<string, string>> = {
  headers: 'message.headers',
  statusCode: 'message.status.code',
  reasonPhrase: 'message.status.reason',
};
const literal = String.raw`\(\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")\s*\)`;
const getCall = new RegExp(String.raw`(?:\b(request|message)\.header)?\.(?:get|getvariable)` + literal, 'g');
const getter =
  /\.(request|message)\.(verb|method|uri|path|search|headers|parameters|contentType|statusCode|reasonPhrase)\b(?!\s*=(?!=))/g;
const bodyRead = /\b(request|message|session)\.(?:body|input)\.(?:readAsJSON|readAsBuffer)\b/g;
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The variable names `source` reads with a literal name, in order of appearance, at most
 * {@link readAheadLimits}.names. A name in a comment or an untaken branch is read for nothing; a
 * name built at run time is not found and its read goes to the gateway thread.
 */
export function readAheadNames(source: string): string[] {
  const found: Array<[number, string]> = [];
  for (const match of source.matchAll(getCall)) {
    const name = match[2] ?? match[3]!;
    if (match[1] === undefined) found.push([match.index, name]);
    else if (headerName.test(name)) found.push([match.index, `${match[1]}.headers["${name}"]`]);
  }
  for (const match of source.matchAll(getter)) {
    const name = (match[1] === 'request' ? requestGetters : messageGetters)[match[2]!];
    if (name !== undefined) found.push([match.index, name]);
  }
  for (const match of source.matchAll(bodyRead)) {
    found.push([match.index, match[1] === 'request' ? 'request.body' : 'message.body']);
  }
  const names = new Set(found.sort((a, b) => a[0] - b[0]).map(([, name]) => name));
  return [...names].slice(0, readAheadLimits.names);
}

type Tree = Record<string, unknown>;

/** Where a read of a name caches a parsed body: the first raw body on its path, in a writable tree. */
interface RawSpot {
  node: Tree;
  key: string;
  raw: RawBody;
  /** The name reads the whole body (not a value inside it). */
  whole: boolean;
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof RawBody);
}

/**
 * Walks `segments` as GatewayContext.get does and returns where that read would cache a parsed
 * body, undefined if nowhere, or 'unsure' where this walk cannot say (a body in a header bag).
 */
function rawSpot(vars: Tree, segments: readonly string[]): RawSpot | 'unsure' | undefined {
  let node: unknown = vars;
  for (let i = 0; i < segments.length; i++) {
    if (!isTree(node)) return undefined;
    const key = segments[i]!;
    if (i > 0 && segments[i - 1] === 'headers') {
      const lower = key.toLowerCase();
      const matches = Object.keys(node).filter((name) => name.toLowerCase() === lower);
      if (matches.some((name) => node instanceof Object && (node as Tree)[name] instanceof RawBody)) return 'unsure';
      node = Object.hasOwn(node, lower) ? node[lower] : matches.length > 0 ? node[matches[0]!] : undefined;
      continue;
    }
    const value = Object.hasOwn(node, key) ? node[key] : undefined;
    if (value instanceof RawBody) {
      return Object.isFrozen(node) ? undefined : { node, key, raw: value, whole: i === segments.length - 1 };
    }
    node = value;
  }
  return undefined;
}

/** {@link rawSpot} of a name; undefined too for a name the context refuses (its read throws, and caches nothing). */
function spotOf(vars: Tree, name: string): RawSpot | 'unsure' | undefined {
  try {
    const path = parseVariablePath(name);
    return path.prototypeKey === undefined ? rawSpot(vars, path.segments) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The marked text of the whole JSON body at `spot`, if the read names a whole JSON body. Not for a
 * body with a NUL character: the engine takes text as a C string, so the script would read the
 * body up to it while the gateway forwards all of it (a guard script checking `{"user":"bob"}\0
 * {"role":"admin"}` saw only the first part). Such a body is read as any other value is: as the
 * context's value, written as JSON, where NUL is escaped.
 */
function wholeText(spot: RawSpot | 'unsure' | undefined): string | undefined {
  const text = typeof spot === 'object' && spot.whole ? rawJsonText(spot.raw) : undefined;
  return text === undefined || text.includes('\0') ? undefined : rawJsonMark + text;
}

/** One run's read-ahead over its request's context. */
export class ReadAhead {
  private readonly parsed = new Map<string, RawSpot & { value: unknown }>();

  constructor(private readonly ctx: FlowContext) {}

  /** Reads `names` now; what cannot be read ahead without a side effect, or past the limits, is left out. */
  take(names: readonly string[], toJson: (value: unknown) => string | undefined): ReadAheadEntry[] {
    const entries: ReadAheadEntry[] = [];
    let chars = 0;
    for (const name of names) {
      let entry: ReadAheadEntry | undefined;
      try {
        entry = this.read(name, toJson);
      } catch {
        continue;
      }
      const json = entry?.[1];
      if (entry === undefined || chars + (json?.length ?? 0) > readAheadLimits.chars) continue;
      chars += json?.length ?? 0;
      entries.push(entry);
    }
    return entries;
  }

  /**
   * Reads one name now, changing nothing in the context (the inline tier, inline.ts, answers a
   * script's read so); undefined when that cannot be done. Throws what the read throws. When the
   * entry says `touch`, {@link touched} must follow if the read is to count.
   */
  read(name: string, toJson: (value: unknown) => string | undefined): ReadAheadEntry | undefined {
    const vars = (this.ctx as { vars?: unknown }).vars;
    if (!isTree(vars)) return undefined;
    const spot = spotOf(vars, name);
    if (spot === 'unsure') return undefined;
    const whole = wholeText(spot);
    if (whole !== undefined) return [name, whole, false];
    try {
      return [name, toJson(this.ctx.get(name)), spot !== undefined];
    } finally {
      // The read cached the parsed body: keep it aside and put the raw bytes back.
      if (spot !== undefined && spot.node[spot.key] !== spot.raw) {
        if (!this.parsed.has(name)) this.parsed.set(name, { ...spot, value: spot.node[spot.key] });
        spot.node[spot.key] = spot.raw;
      }
    }
  }

  /**
   * A read of a whole JSON body still held as bytes, answered with the body's own text (marked,
   * prelude.ts `rawJsonMark`) rather than parsed and written again here: the script's engine
   * parses it once, and the context keeps the bytes, so a body a script only reads is forwarded as
   * received (no number rounded by a parse and a write). Undefined for any other read.
   */
  wholeJson(name: string): string | undefined {
    const vars = (this.ctx as { vars?: unknown }).vars;
    return isTree(vars) ? wholeText(spotOf(vars, name)) : undefined;
  }

  /** The script read `name` from the read-ahead: the context caches the parsed body, as that read would have. */
  touched(name: string): void {
    const spot = this.parsed.get(name);
    if (spot !== undefined && spot.node[spot.key] === spot.raw) spot.node[spot.key] = spot.value;
  }
}
