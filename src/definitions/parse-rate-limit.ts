/**
 * API Connect's rate-limit syntax: `<count>/<n><unit>` with unit second, minute, hour, day or
 * week (singular or plural, `n` optional: `100/hour` = `100/1hour`), or `unlimited`
 * (IBM "Describing Plans in your Product").
 */

export interface ParsedRateLimit {
  unlimited: boolean;
  /** Requests allowed per window; 0 when unlimited. */
  count: number;
  /** Window length in milliseconds; 0 when unlimited. */
  windowMs: number;
}

const unitMs: Record<string, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

const syntax = /^(\d+)\s*\/\s*(\d*)\s*(second|minute|hour|day|week)s?$/i;

/**
 * Parses a rate-limit value such as `100/1hour`, `5/2minutes` or `unlimited`.
 * @example parseRateLimit('100/1hour') // { unlimited: false, count: 100, windowMs: 3600000 }
 */
export function parseRateLimit(value: string): ParsedRateLimit {
  const text = String(value).trim();
  if (text.toLowerCase() === 'unlimited') return { unlimited: true, count: 0, windowMs: 0 };
  const match = syntax.exec(text);
  if (match === null) {
    throw new Error(
      `rate limit ${JSON.stringify(value)} is not of the form <count>/<n><unit> (unit second, minute, hour, day or week, e.g. 100/1hour) or unlimited`,
    );
  }
  const count = Number(match[1]);
  const multiple = match[2] === '' ? 1 : Number(match[2]);
  if (count < 1) throw new Error(`rate limit ${JSON.stringify(value)} allows no request: the count must be at least 1`);
  if (multiple < 1)
    throw new Error(`rate limit ${JSON.stringify(value)} has an empty window: the interval must be at least 1`);
  return { unlimited: false, count, windowMs: multiple * unitMs[match[3].toLowerCase()] };
}
