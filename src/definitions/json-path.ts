/**
 * JSON paths for definition problems: `$.x-ibm-configuration.assembly.execute[0].invoke.timeout`.
 * Keys that read as names (letters, digits, `_`, `-`, `$`) use dot notation; anything else
 * (`/shipping`, `200`, `Default burst-limit`) uses brackets: `$.paths['/shipping'].get`.
 */

export type PathSegment = string | number;

const plainKey = /^[A-Za-z_$][\w$-]*$/;

/** Appends one key or array index to a JSON path. */
export function appendPath(base: string, segment: PathSegment): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (plainKey.test(segment)) return `${base}.${segment}`;
  return `${base}['${segment.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`;
}

/** Builds a JSON path from segments, starting at `$` (or at `base`). */
export function jsonPath(segments: readonly PathSegment[], base = '$'): string {
  return segments.reduce<string>(appendPath, base);
}

/** Splits a JSON pointer (`/paths/~1shipping/get`) into its unescaped tokens. */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Turns a JSON pointer into path segments, using the data to tell array indices from object
 * keys that look like numbers (`responses/200` is a key, `execute/0` an index).
 */
export function pointerSegments(pointer: string, data: unknown): PathSegment[] {
  const segments: PathSegment[] = [];
  let current: unknown = data;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(current) && /^\d+$/.test(token)) {
      segments.push(Number(token));
      current = current[Number(token)];
    } else {
      segments.push(token);
      current = isRecord(current) ? current[token] : undefined;
    }
  }
  return segments;
}

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
