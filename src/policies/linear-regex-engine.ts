/**
 * JSONata regex literals (`$match(s, /…/)`, `$replace`, `$split`, `$contains`, `~> /…/`) on the
 * linear engine: in a condition or a map value they run against consumer data, and JSONata would
 * otherwise match them with V8's backtracking `RegExp`. jsonata 2.x takes the engine as its
 * `RegexEngine` option and builds one per evaluation of a literal, from the `RegExp` its parser
 * made; each literal is compiled once, with its expression, and looked up here by that `RegExp`.
 */
import { compileLinearPattern, PatternRefusal } from '../definitions/linear-pattern.ts';
import type { LinearPattern } from '../definitions/linear-pattern.ts';
import { PolicyCompileError } from './types.ts';

const compiledLiterals = new WeakMap<RegExp, LinearPattern>();

/**
 * Compiles every regex literal of a parsed expression, at publish time.
 * @throws PolicyCompileError `pattern-syntax` or `unsupported-pattern`, naming `path`.
 */
export function compileRegexLiterals(ast: unknown, path: string, seen = new Set<object>()): void {
  if (ast instanceof RegExp) {
    if (compiledLiterals.has(ast)) return;
    try {
      // JSONata adds `g`; its own flags are `i` and `m`. The literal is read as with `u`.
      compiledLiterals.set(ast, compileLinearPattern(ast.source, ast.flags));
    } catch (error) {
      if (!(error instanceof PatternRefusal)) throw error;
      throw new PolicyCompileError(path, error.rule, `the regular expression /${ast.source}/: ${error.reason}`);
    }
    return;
  }
  if (typeof ast !== 'object' || ast === null || seen.has(ast)) return;
  seen.add(ast);
  for (const child of Object.values(ast)) compileRegexLiterals(child, path, seen);
}

/**
 * The `RegExp` stand-in jsonata calls: `lastIndex` and `exec` as a global `RegExp` has them. A
 * literal not compiled with its expression (one `$eval` parsed from data at request time) is
 * refused rather than compiled on the request's path.
 */
class LinearRegex {
  lastIndex = 0;
  private readonly pattern: LinearPattern;

  constructor(literal: RegExp) {
    const pattern = compiledLiterals.get(literal);
    if (pattern === undefined) throw new Error('a regular expression not compiled with its expression is refused');
    this.pattern = pattern;
  }

  exec(text: string): RegExpExecArray | null {
    const found = this.pattern.find(text, this.lastIndex);
    if (found === null) {
      this.lastIndex = 0;
      return null;
    }
    this.lastIndex = found.end;
    return Object.assign([...found.groups], { index: found.index, input: text }) as RegExpExecArray;
  }
}

/** jsonata's option type names `RegExpConstructor`; it only ever calls `new` with a `RegExp`. */
export const LinearRegexEngine = LinearRegex as unknown as RegExpConstructor;
