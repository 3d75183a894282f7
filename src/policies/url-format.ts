/**
 * JSON Schema `format: url` (ajv-formats 3.0.1's `url`) on the linear engine. ajv-formats matches
 * it with a backtracking expression whose time is quadratic in the value (0.47 s for 20 000
 * characters, 1.35 s for 40 000, measured here), on consumer data; its other formats stay linear
 * under the same probe. Its three negative lookaheads, which refuse private IPv4 hosts (10/8,
 * 127/8, 169.254/16, 192.168/16, 172.16/12), are written out below as the octets that remain,
 * so the language is the same: test/policies/url-format.test.ts compares the two.
 */
import { compileLinearPattern } from '../definitions/linear-pattern.ts';

// The octet grammar of ajv-formats' expression, as text: first, middle (twice), last.
const middle = String.raw`1?\d{1,2}|2[0-4]\d|25[0-5]`;
const last = String.raw`[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]`;
// The first octets the lookaheads leave: 1–223 but 10, 127, 169, 172 and 192.
const publicFirst = String.raw`[1-9]|1[1-9]|[2-9]\d|1[01]\d|12[0-689]|1[3-5]\d|16[0-8]|17[013-9]|18\d|19[013-9]|2[01]\d|22[0-3]`;
// After 169, 192 and 172: the second octets that are not 254, 168, 16–31.
const after169 = String.raw`\d{1,2}|1\d\d|2[0-4]\d|25[0-35]`;
const after192 = String.raw`\d{1,2}|1[0-57-9]\d|16[0-79]|2[0-4]\d|25[0-5]`;
const after172 = String.raw`\d|0\d|1[0-5]|3[2-9]|[4-9]\d|1\d\d|2[0-4]\d|25[0-5]`;

const publicIpv4 =
  String.raw`(?:(?:${publicFirst})\.(?:${middle})|169\.(?:${after169})|192\.(?:${after192})|172\.(?:${after172}))` +
  String.raw`\.(?:${middle})\.(?:${last})`;
const label = String.raw`(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+`;
const hostName = String.raw`${label}(?:\.${label})*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,}))`;

const url = compileLinearPattern(
  String.raw`^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:${publicIpv4}|${hostName})(?::\d{2,5})?(?:\/[^\s]*)?$`,
  'iu',
);

/** The `url` format for ajv's `addFormat`. */
export const urlFormat = {
  type: 'string' as const,
  validate(value: string): boolean {
    return url.test(value);
  },
};
