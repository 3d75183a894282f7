/**
 * Provider-written regular expressions that run on consumer data (JSON Schema `pattern` and
 * `patternProperties`, parameter patterns, jwt-validate's claim patterns, JSONata regex
 * literals) are matched by re2js, a JavaScript port of RE2 whose time is linear in the input.
 * V8's backtracking engine takes exponential time on patterns such as `^([A-Za-z0-9]+ ?)*$`
 * (5 s for 31 characters, measured in review) on the gateway's one thread, for every tenant.
 *
 * A pattern compiles once, when its API is imported or compiled, never per request: first by V8
 * (ECMAScript is the language providers write), then rewritten for RE2 (ecmascript-pattern.ts)
 * and compiled again. What RE2 cannot run, or runs at too high a cost, is refused with a
 * {@link PatternRefusal} naming the construct (docs/definitions.md#regular-expressions).
 */
import { RE2JS, RE2Set } from 're2js';
import { PatternRefusal, toRe2Syntax } from './ecmascript-pattern.ts';

export { PatternRefusal };

/**
 * The most RE2 instructions one pattern may compile to. The matching cost per input character
 * grows with it (up to ~20 ns per instruction where the engine falls back to its NFA, measured
 * here): `^[A-Za-z]{1,255}$` is 513, `^[0-9]{5}$` is 9.
 */
export const maxPatternInstructions = 1000;
// The DFA behind `test` caches states up to this estimate, then restarts or falls back to the
// NFA: bounded memory per pattern (re2js's own default, 8 MiB, measured at 8.5 MB retained).
const dfaBytes = 256 * 1024;

/** One match: its start and end (UTF-16 offsets) and its groups, the whole match first. */
export interface PatternMatch {
  readonly index: number;
  readonly end: number;
  readonly groups: ReadonlyArray<string | undefined>;
}

/** A compiled pattern: `test` searches anywhere in the text, as ECMAScript's `RegExp#test`. */
export class LinearPattern {
  readonly source: string;
  readonly flags: string;
  private readonly captures: RE2JS;
  private readonly anywhere: RE2Set;

  constructor(source: string, flags: string, re2Source: string) {
    this.source = source;
    this.flags = flags;
    this.captures = RE2JS.compile(re2Source);
    this.anywhere = new RE2Set(RE2Set.UNANCHORED, 0, dfaBytes);
    this.anywhere.add(re2Source);
    this.anywhere.compile();
  }

  /** Whether the pattern matches somewhere in `text`. */
  test(text: string): boolean {
    return this.anywhere.match(text).length > 0;
  }

  /** The first match starting at or after `from`, leftmost-first like ECMAScript, or null. */
  find(text: string, from = 0): PatternMatch | null {
    if (from > text.length) return null;
    const matcher = this.captures.matcher(text);
    if (!matcher.find(from)) return null;
    const groups: Array<string | undefined> = [];
    for (let group = 0; group <= matcher.groupCount(); group++) groups.push(matcher.group(group) ?? undefined);
    return { index: matcher.start(), end: matcher.end(), groups };
  }

  /** Ajv keys its shared patterns by this text. */
  toString(): string {
    return `/${this.source}/${this.flags}`;
  }

  get instructions(): number {
    return this.captures.programSize();
  }
}

/**
 * Compiles an ECMAScript pattern (`flags`: `u` always applies; `i` and `m` may be added) for the
 * linear engine.
 * @throws PatternRefusal `pattern-syntax` (not a valid ECMAScript regular expression) or
 *   `unsupported-pattern` (a lookaround, a backreference, a repetition count over 1000, …).
 * @example compileLinearPattern('^[0-9]{5}$').test('75001') // true
 */
export function compileLinearPattern(source: string, flags = 'u'): LinearPattern {
  const ignoreCase = flags.includes('i');
  const multiline = flags.includes('m');
  const normalised = `${ignoreCase ? 'i' : ''}${multiline ? 'm' : ''}u`;
  try {
    new RegExp(source, normalised);
  } catch (error) {
    throw new PatternRefusal('pattern-syntax', `not a valid regular expression: ${(error as Error).message}`);
  }
  const re2Source = toRe2Syntax(source, { ignoreCase, multiline });
  let pattern: LinearPattern;
  try {
    pattern = new LinearPattern(source, normalised, re2Source);
  } catch (error) {
    throw new PatternRefusal('unsupported-pattern', re2Reason((error as Error).message));
  }
  if (pattern.instructions > maxPatternInstructions) {
    throw new PatternRefusal(
      'unsupported-pattern',
      `it compiles to ${pattern.instructions} instructions, more than the ${maxPatternInstructions} the gateway matches per pattern (long counted repetitions cost the most: bound a length with maxLength instead)`,
    );
  }
  return pattern;
}

/** The refusal of `source`, or undefined when the linear engine runs it (import checks). */
export function patternRefusal(source: string, flags = 'u'): PatternRefusal | undefined {
  try {
    compileLinearPattern(source, flags);
    return undefined;
  } catch (error) {
    if (error instanceof PatternRefusal) return error;
    throw error;
  }
}

function re2Reason(message: string): string {
  if (message.includes('invalid repeat count'))
    return 'a repetition count above 1000 (nested repetitions count together: (a{100}){100} is 10000)';
  if (/invalid character class range: `\\[pP]\{/.test(message))
    return 'a Unicode property the linear engine does not know (scripts by their long names: Script=Greek, not Script=Grek)';
  if (message.includes('expression too large')) return 'the pattern is too large';
  return `the linear engine cannot compile it (${message})`;
}

/**
 * Ajv's `code.regExp` option: JSON Schema `pattern`, `patternProperties` and `propertyNames`
 * on the linear engine. A refusal throws out of `ajv.compile`.
 */
export const ajvPatternEngine = Object.assign(
  function linearRegExp(source: string, flags: string): LinearPattern {
    return compileLinearPattern(source, flags);
  },
  { code: 'linearRegExp' },
);
