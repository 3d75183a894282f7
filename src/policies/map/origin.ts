/**
 * Where the map's inputs came from, for its XML codec: whether an input still holds the
 * consumer's request (an unreadable or amplifying conversion is then the consumer's 400, not the
 * backend's 502 or the flow's 500), and how large the inputs are (an XML output is bounded by a
 * multiple of them, as json-to-xml bounds its output by its input: ConversionBudget).
 */
import { RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';
import { variableRoot } from '../variable-names.ts';

/** The map's inputs as the XML codec sees them, read before the context parses them. */
export interface MapSource {
  /** Whether some input holds data from the consumer's request. */
  fromRequest: boolean;
  /** The inputs' size (bytes of a raw body, characters of a tree's JSON): the output bound's base. */
  inputBytes: number;
}

/** The variable's value as stored, before {@link FlowContext.get} parses a raw body in place. */
function storedValue(ctx: FlowContext, variable: string): unknown {
  const dot = variable.lastIndexOf('.');
  if (dot < 0) return ctx.get(variable);
  const holder = ctx.get(variable.slice(0, dot));
  if (typeof holder !== 'object' || holder === null || holder instanceof RawBody || Buffer.isBuffer(holder))
    return undefined;
  const key = variable.slice(dot + 1);
  return Object.hasOwn(holder, key) ? (holder as Record<string, unknown>)[key] : undefined;
}

/**
 * Whether `value` is the consumer's request body: the same object (`message.body` starts as the
 * request's RawBody), or the same text once either was read as text (as xml-to-json's bodyText).
 */
function isRequestBody(value: unknown, requestBody: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (value === requestBody) return true;
  if (typeof value !== 'string') return false;
  if (typeof requestBody === 'string') return value === requestBody;
  return (
    requestBody instanceof RawBody &&
    requestBody.bytes.length === Buffer.byteLength(value) &&
    requestBody.bytes.toString('utf8') === value
  );
}

/**
 * Whether the variable holds the consumer's data: anything under `request`, or a value that is
 * still the request body (e.g. `message.body` before a backend replaced it). Call it before the
 * variable is read: reading parses a raw body in place, and the parse is a new object.
 */
export function holdsRequestData(ctx: FlowContext, variable: string, value = storedValue(ctx, variable)): boolean {
  if (variableRoot(variable) === 'request') return true;
  return isRequestBody(value, ctx.request.body);
}

/** The size a value stands for: a raw body's bytes, a string's characters, a tree's JSON (shared parts once). */
export function sizeOf(value: unknown): number {
  let size = 0;
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') size += next.length + 2;
    else if (next instanceof RawBody) size += next.bytes.length;
    else if (Buffer.isBuffer(next)) size += next.length;
    else if (typeof next === 'object' && next !== null) {
      if (seen.has(next)) continue;
      seen.add(next);
      size += 2;
      for (const [key, child] of Object.entries(next)) {
        size += key.length + 4;
        pending.push(child);
      }
    } else if (next !== undefined) size += String(next).length;
  }
  return size;
}

/** Where one input comes from; call it before the input is read (see {@link holdsRequestData}). */
export function sourceOf(ctx: FlowContext, variable: string): MapSource {
  const value = storedValue(ctx, variable);
  return { fromRequest: holdsRequestData(ctx, variable, value), inputBytes: sizeOf(value) };
}
