/**
 * Conditions of the `switch` and `if` policies. On DataPower API Gateway a condition is a
 * JSONata expression with API Connect's extension functions (IBM "switch": `$header()`,
 * `$httpVerb()`, `$operationID()`, `$operationPath()`, `$queryParameter()`, `$statusCode()`,
 * `$storageType()`); v5 conditions were JavaScript such as
 * `((request.verb==='GET')&&(api.operation.path==='/path-1'))`, which is translated to JSONata
 * where the translation is a plain operator swap.
 *
 * A condition is evaluated against a view of the context variables: `request`, `message`,
 * `api`, `client`, `plan`, `product`, `error` and user variables (`xyz_response`) are readable
 * by path, exactly as `FlowContext.get` reads them (bodies parse on first read).
 */
import jsonata from 'jsonata';
import { budgetOptions, evaluateWithinBudget, installBudget } from './jsonata-budget.ts';
import { compileRegexLiterals, LinearRegexEngine } from './linear-regex-engine.ts';
import { PolicyCompileError, RawBody } from './types.ts';
import type { FlowContext } from './types.ts';

/** A condition compiled at publish time; evaluating it never compiles anything. */
export type Condition = (ctx: FlowContext) => Promise<boolean>;

const contextBinding = '__porticoFlowContext';

type JsonataFocus = { environment: { lookup(name: string): unknown } };

function flowOf(focus: JsonataFocus): FlowContext {
  return focus.environment.lookup(contextBinding) as FlowContext;
}

/** API Connect's JSONata extensions (IBM "switch" policy, API Gateway). */
const extensions: Array<[string, (this: JsonataFocus, ...args: never[]) => unknown, string]> = [
  [
    'header',
    function header(this: JsonataFocus, name: string) {
      return flowOf(this).get(`request.headers.${name}`);
    },
    '<s:s>',
  ],
  [
    'httpVerb',
    function httpVerb(this: JsonataFocus) {
      return flowOf(this).request.verb;
    },
    '<:s>',
  ],
  [
    'operationID',
    function operationID(this: JsonataFocus) {
      return flowOf(this).operation.id;
    },
    '<:s>',
  ],
  [
    'operationPath',
    function operationPath(this: JsonataFocus) {
      return flowOf(this).operation.path;
    },
    '<:s>',
  ],
  [
    'queryParameter',
    function queryParameter(this: JsonataFocus, name: string) {
      const values = new URLSearchParams(flowOf(this).request.search).getAll(name);
      return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
    },
    '<s:x>',
  ],
  [
    'statusCode',
    function statusCode(this: JsonataFocus) {
      return flowOf(this).get('message.status.code');
    },
    '<:n>',
  ],
  [
    'storageType',
    function storageType(this: JsonataFocus, name: string) {
      return storageTypeOf(flowOf(this), name ?? 'message.body');
    },
    '<s?:s>',
  ],
];

/** DataPower's storage type of a variable: `json`, `xml`, `binary` or `empty`. */
function storageTypeOf(ctx: FlowContext, name: string): string {
  const value = ctx.get(name);
  if (value === undefined || value === null || value === '') return 'empty';
  if (Buffer.isBuffer(value) || value instanceof RawBody) return 'binary';
  if (typeof value === 'string') return value.trimStart().startsWith('<') ? 'xml' : 'binary';
  return 'json';
}

/** Compiles a condition (JSONata, or a simple v5 JavaScript condition) once; a bad one names `path`. */
export function compileCondition(source: unknown, path: string): Condition {
  if (typeof source !== 'string' || source.trim() === '') {
    throw new PolicyCompileError(path, 'required', 'a condition must be a non-empty string');
  }
  // Only what is not JSONata is read as a v5 JavaScript condition: a JSONata regex literal may
  // hold `!`, `||` or `==`, which the operator swap would refuse or rewrite.
  const text = isJsonata(source) ? source : translateJavaScriptCondition(source, path);
  const expression = parseJsonata(text, path, 'condition-syntax', 'condition is not valid JSONata');
  return async function condition(ctx: FlowContext): Promise<boolean> {
    return truthy(await evaluateWithinBudget(expression, contextView(ctx), { [contextBinding]: ctx }, ctx, path));
  };
}

/** Compiles a JSONata expression (no v5 translation) with the extensions; used for map `value`. */
export function compileExpression(
  source: string,
  path: string,
): (input: unknown, ctx: FlowContext) => Promise<unknown> {
  const expression = parseJsonata(source, path, 'expression-syntax', 'not a valid JSONata expression');
  return function evaluateExpression(input, ctx) {
    return evaluateWithinBudget(expression, input, { [contextBinding]: ctx }, ctx, path);
  };
}

/**
 * Parses JSONata with the extensions, its regex literals on the linear engine
 * (linear-regex-engine.ts) and its evaluations within their budget (jsonata-budget.ts).
 */
function parseJsonata(source: string, path: string, rule: string, what: string): jsonata.Expression {
  let expression: jsonata.Expression;
  try {
    expression = jsonata(source, budgetOptions(LinearRegexEngine));
  } catch (error) {
    throw new PolicyCompileError(path, rule, `${what}: ${(error as Error).message}`);
  }
  compileRegexLiterals(expression.ast(), path);
  installBudget(expression);
  for (const [name, implementation, signature] of extensions)
    expression.registerFunction(name, implementation as never, signature);
  return expression;
}

function isJsonata(source: string): boolean {
  try {
    jsonata(source);
    return true;
  } catch {
    return false;
  }
}

const jsOperator = /===|!==|==|&&|\|\||!(?!=)/;

/**
 * Rewrites a v5 JavaScript condition's operators to JSONata (`===`/`==` → `=`, `!==` → `!=`,
 * `&&` → `and`, `||` → `or`), leaving string literals alone. A negation `!x` has no plain
 * JSONata operator, so it is refused with a compile error rather than guessed.
 */
export function translateJavaScriptCondition(source: string, path: string): string {
  let out = '';
  let translated = false;
  let i = 0;
  while (i < source.length) {
    const char = source[i];
    if (char === '"' || char === "'") {
      const end = closingQuote(source, i);
      if (end < 0) throw new PolicyCompileError(path, 'condition-syntax', 'unterminated string literal in condition');
      out += source.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    const match = jsOperator.exec(source.slice(i, i + 3));
    if (match !== null && match.index === 0) {
      const op = match[0];
      if (op === '!') {
        throw new PolicyCompileError(
          path,
          'unsupported-condition',
          'the JavaScript negation `!` has no JSONata equivalent here; write the condition in JSONata (e.g. `$not(...)` or `!=`)',
        );
      }
      out += op === '===' || op === '==' ? '=' : op === '!==' ? '!=' : op === '&&' ? ' and ' : ' or ';
      translated = true;
      i += op.length;
      continue;
    }
    if (char === '!' && source[i + 1] === '=') {
      out += '!=';
      i += 2;
      continue;
    }
    out += char;
    i++;
  }
  return translated ? out : source;
}

function closingQuote(source: string, start: number): number {
  const quote = source[start];
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === quote) return i;
  }
  return -1;
}

/** JSONata's `$boolean()` casting rules. */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.some(truthy);
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'function') return false;
  return Object.keys(value).length > 0;
}

/**
 * The context as a JSONata input: a root whose properties are read through `ctx.get`, and
 * objects beneath it read raw bodies through `ctx.get` too, so they are parsed (and cached)
 * exactly as a policy reading them would.
 */
export function contextView(ctx: FlowContext): unknown {
  return new Proxy(Object.create(null) as Record<string, unknown>, {
    get(_target, key) {
      return typeof key === 'string' ? wrap(ctx, key, ctx.get(key)) : undefined;
    },
    // JSONata tests `hasOwnProperty` before reading a name; report every defined variable.
    getOwnPropertyDescriptor(_target, key) {
      if (typeof key !== 'string') return undefined;
      const value = ctx.get(key);
      return value === undefined
        ? undefined
        : { value: wrap(ctx, key, value), writable: false, enumerable: true, configurable: true };
    },
  });
}

function wrap(ctx: FlowContext, path: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return value;
  // A frozen tree is shared by requests (the snapshot's `api.*`, parameter defaults) and holds no
  // raw body; a proxy over it could not answer with anything but its own values (Proxy invariants).
  if (Object.isFrozen(value)) return value;
  return new Proxy(value as Record<string, unknown>, {
    get(target, key) {
      if (typeof key !== 'string') return Reflect.get(target, key);
      const child = Reflect.get(target, key);
      const childPath = `${path}['${key}']`;
      return wrap(ctx, childPath, child instanceof RawBody ? ctx.get(childPath) : child);
    },
  });
}
