/**
 * Names of context variables and map paths: dot or bracket notation (IBM "Using context
 * variables in GatewayScript and XSLT policies with the DataPower API Gateway":
 * `request.headers['Content-Type']`), and the rule that keeps them away from prototypes
 * (DESIGN §6): a segment `__proto__`, `prototype` or `constructor`, in any case, is never
 * walked, written or cleared, whoever wrote the name (a definition, a script, a request).
 */

const prototypeKeys: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor']);

const segmentPattern = /([^.[\]]+)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+))\s*\]/g;

/** Splits `request.headers['Content-Type'].x` into `request`, `headers`, `Content-Type`, `x`. */
export function splitPath(name: string): string[] {
  const segments: string[] = [];
  for (const match of name.matchAll(segmentPattern)) segments.push(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '');
  return segments;
}

/**
 * The first segment of a variable's path, as `ctx.get` reads it, lower-cased and trimmed (so
 * `request['headers']`, `request[headers]` and ` Request .x` all give `request`): what decides
 * whether a variable holds the consumer's data, never the name's text.
 */
export function variableRoot(name: string): string {
  return (splitPath(name)[0] ?? '').trim().toLowerCase();
}

/**
 * Whether a segment names a prototype link. Compared without case because header bags fold
 * names to lower case, so `__PROTO__` would become `__proto__` on the way in.
 */
export function isPrototypeKey(segment: string): boolean {
  return prototypeKeys.has(segment.toLowerCase());
}

/** The first segment of `segments` that names a prototype link, if any. */
export function prototypeSegment(segments: readonly string[]): string | undefined {
  return segments.find(isPrototypeKey);
}

/**
 * Sets `key` on `target` as an own data property, as `JSON.parse` would: an assignment
 * `target['__proto__'] = value` would replace the object's prototype instead.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A new object without a prototype, for trees and header bags keyed by request or script input
 * (DESIGN §6). The same as `Object.create(null)` to every reader, but V8 keeps an object made
 * this way in fast mode, where `Object.create(null)` makes a dictionary from the start: about
 * 100 bytes against 470 for a bag of seven headers, on every request (issue 18).
 */
export function prototypeFree<T extends object = Record<string, unknown>>(): T {
  return Object.setPrototypeOf({}, null) as T;
}
