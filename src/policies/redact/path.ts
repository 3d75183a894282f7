/**
 * The path reader of `redact`: a redaction's `path` (and the policy's `root`) is parsed with
 * jsonata's own parser and its syntax tree walked; only a location path is accepted (IBM
 * "Constructing JSONata expressions to redact fields"): field steps (plain, quoted or
 * backquoted names), `*`, `**`, `$` as the first step, array indexes `[n]` and predicates
 * `[expr]`. Anything else (a function call or a block as a step, an operator at the top, a
 * variable other than `$`, sorting, grouping, `#`/`@` bindings) is refused, with the rule
 * `redact-path`, at import and by the gateway alike: both call {@link readRedactionPath}.
 *
 * A predicate may use literals, relative field paths, `$` (the item), comparisons, `and`/`or`,
 * `in`, arithmetic, `&`, `? :` and a list of pure functions; it is printed back from its tree
 * and compiled once with the gateway's JSONata machinery (conditions.ts), so each evaluation
 * runs within the JSONata budget (jsonata-budget.ts).
 */
import jsonata from 'jsonata';
import { compileExpression } from '../conditions.ts';
import { PolicyCompileError } from '../types.ts';
import type { FlowContext } from '../types.ts';
import { isPrototypeKey } from '../variable-names.ts';

/** What a step selects from each item it is applied to. */
export type Selector =
  { kind: 'self' } | { kind: 'name'; name: string } | { kind: 'wildcard' } | { kind: 'descendants' };

/** A filter on the sequence a step produced. */
export type Stage =
  | { kind: 'indexes'; indexes: number[] }
  | { kind: 'predicate'; source: string; evaluate(input: unknown, ctx: FlowContext): Promise<unknown> };

export interface PathStep {
  selector: Selector;
  stages: Stage[];
}

/** The rule every refused path is reported under. */
export const pathRule = 'redact-path';

type Node = Record<string, unknown> & { type?: string; value?: unknown };

// jsonata AST keys a location step may carry; any other (`focus`, `index`, `tuple`, `group`,
// `keepArray`, `predicate` outside the first step, …) means more than a location path.
const stepKeys = new Set(['type', 'value', 'position', 'stages', 'predicate']);

/** The functions a predicate may call: pure, first order (API Connect's list less regex and higher-order ones). */
const predicateFunctions = new Set(
  [
    ...['average', 'max', 'min', 'sum', 'append', 'count', 'reverse', 'boolean', 'exists', 'not'],
    ...['abs', 'ceil', 'floor', 'number', 'round', 'sqrt', 'power', 'keys', 'lookup'],
    ...['contains', 'join', 'length', 'lowercase', 'uppercase', 'pad', 'split', 'string'],
    ...['substring', 'substringAfter', 'substringBefore', 'trim'],
  ].map(String),
);

const predicateOperators = new Set(['=', '!=', '<', '<=', '>', '>=', 'and', 'or', 'in', '+', '-', '*', '/', '%', '&']);

function refuse(path: string, reason: string): never {
  throw new PolicyCompileError(path, pathRule, reason);
}

/** Parses `source` with jsonata's parser; a syntax error is refused with jsonata's message. */
function parse(source: string, path: string, what: string): Node {
  if (source.trim() === '') refuse(path, `the ${what} is empty`);
  try {
    return jsonata(source).ast() as Node;
  } catch (error) {
    return refuse(path, `the ${what} is not valid JSONata: ${(error as Error).message}`);
  }
}

/** The steps of a location path, a lone step (`*`, `$[0]`) read as a path of one. */
function stepsOf(ast: Node, path: string, what: string): Node[] {
  if (ast.type === 'path') {
    if (Object.keys(ast).some((key) => !['type', 'steps', 'position'].includes(key)))
      refuse(path, `the ${what} uses more than a location path (grouping, keep-array \`[]\` or bindings)`);
    return ast.steps as Node[];
  }
  if (ast.type === 'variable' || ast.type === 'wildcard' || ast.type === 'descendant') return [ast];
  return refuse(
    path,
    `the ${what} must be a location path (fields, *, **, [index], [predicate]); got a ${describe(ast)}`,
  );
}

function describe(node: Node): string {
  if (node.type === 'binary') return `\`${String(node.value)}\` expression`;
  if (node.type === 'function') return 'function call';
  if (node.type === 'block') return 'parenthesised block';
  if (node.type === 'unary') return node.value === '[' ? 'list constructor' : `\`${String(node.value)}\` expression`;
  return `${String(node.type)} expression`;
}

/**
 * A redaction's `path` as the steps the gateway walks. With a `root`, the path is relative to it
 * (`$` is the root itself); without, its first step names a context variable (`message`,
 * `request`, an invoke's `output`), and the path must name something inside it.
 * @throws PolicyCompileError (rule `redact-path`) for anything outside the subset.
 */
export function readRedactionPath(source: string, hasRoot: boolean, path: string): PathStep[] {
  const nodes = stepsOf(parse(source, path, 'path'), path, 'path');
  const steps = nodes.map((node, index) => readStep(node, index, path));
  if (!hasRoot) {
    if (steps[0]?.selector.kind === 'self' && steps[0].stages.length === 0) steps.shift();
    const first = steps[0];
    if (first?.selector.kind !== 'name' || first.stages.length > 0)
      refuse(path, 'without `root`, the path starts with a context variable (message.body.card.number)');
    if (steps.length < 2)
      refuse(
        path,
        `without \`root\`, the path names fields inside the variable ${first.selector.name}, not the variable`,
      );
  }
  const last = steps[steps.length - 1];
  if (last.selector.kind === 'self')
    refuse(path, 'the path selects the root itself; name the fields to redact ($.card)');
  if (last.selector.kind === 'descendants')
    refuse(path, '`**` selects every value; name the fields after it (**.password)');
  return steps;
}

function readStep(node: Node, index: number, path: string): PathStep {
  const selector = selectorOf(node, index, path);
  const extra = Object.keys(node).find((key) => !stepKeys.has(key));
  if (extra !== undefined) refuse(path, `step ${index + 1} uses \`${extra}\`, which is more than a location path`);
  const stages = [...((node.stages as Node[] | undefined) ?? []), ...((node.predicate as Node[] | undefined) ?? [])];
  return { selector, stages: stages.map((stage) => readStage(stage, path)) };
}

function selectorOf(node: Node, index: number, path: string): Selector {
  switch (node.type) {
    case 'name': {
      const name = String(node.value);
      if (isPrototypeKey(name)) refuse(path, `the field name "${name}" would reach a prototype`);
      return { kind: 'name', name };
    }
    case 'wildcard':
      return { kind: 'wildcard' };
    case 'descendant':
      return { kind: 'descendants' };
    case 'variable':
      if (node.value === '' && index === 0) return { kind: 'self' };
      if (node.value === '') refuse(path, '`$` may only start the path');
      return refuse(
        path,
        `the variable $${String(node.value)} is not a location; only \`$\` (the root) may start the path`,
      );
    default:
      return refuse(path, `step ${index + 1} is a ${describe(node)}, not a field, *, ** or $`);
  }
}

function readStage(stage: Node, path: string): Stage {
  if (stage.type !== 'filter') refuse(path, `a \`${String(stage.type)}\` stage is more than a location path`);
  const expr = stage.expr as Node;
  if (expr.type === 'number') return { kind: 'indexes', indexes: [expr.value as number] };
  if (expr.type === 'unary' && expr.value === '[' && (expr.expressions as Node[]).every((e) => e.type === 'number'))
    return { kind: 'indexes', indexes: (expr.expressions as Node[]).map((e) => e.value as number) };
  const source = printPredicate(expr, path);
  const evaluate = compileExpression(source, path);
  return { kind: 'predicate', source, evaluate };
}

/** A predicate printed back from its tree, refused where it leaves the predicate subset. */
export function printPredicate(node: Node, path: string): string {
  const print = (child: unknown): string => printPredicate(child as Node, path);
  switch (node.type) {
    case 'string':
      return JSON.stringify(node.value);
    case 'number':
      return `(${String(node.value)})`;
    case 'value':
      return String(node.value);
    case 'variable':
      if (node.value === '') return '$';
      return refuse(path, `a predicate may not use the variable $${String(node.value)}`);
    case 'path':
      return (node.steps as Node[]).map((step, index) => printPredicateStep(step, index, path)).join('.');
    case 'name':
      return printPredicateStep(node, 0, path);
    case 'binary':
      if (!predicateOperators.has(String(node.value)))
        refuse(path, `a predicate may not use the operator \`${String(node.value)}\``);
      return `(${print(node.lhs)} ${String(node.value)} ${print(node.rhs)})`;
    case 'unary':
      if (node.value === '-') return `(-${print(node.expression)})`;
      if (node.value === '[') return `[${(node.expressions as Node[]).map(print).join(', ')}]`;
      return refuse(path, 'a predicate may not build objects');
    case 'condition':
      return `(${print(node.condition)} ? ${print(node.then)}${node.else === undefined ? '' : ` : ${print(node.else)}`})`;
    case 'block':
      if ((node.expressions as Node[]).length !== 1) refuse(path, 'a predicate may not chain expressions with `;`');
      return `(${print((node.expressions as Node[])[0])})`;
    case 'function': {
      const procedure = node.procedure as Node;
      const name = String(procedure.value);
      if (procedure.type !== 'variable' || !predicateFunctions.has(name))
        refuse(
          path,
          `a predicate may not call $${name} (allowed: ${[...predicateFunctions].map((f) => `$${f}`).join(', ')})`,
        );
      return `$${name}(${(node.arguments as Node[]).map(print).join(', ')})`;
    }
    default:
      return refuse(path, `a predicate may not hold a ${describe(node)}`);
  }
}

function printPredicateStep(step: Node, index: number, path: string): string {
  if (Object.keys(step).some((key) => !['type', 'value', 'position'].includes(key)))
    refuse(path, 'a predicate may read fields, not filter, sort or bind them');
  if (step.type === 'variable' && step.value === '' && index === 0) return '$';
  if (step.type !== 'name') refuse(path, `a predicate's path may hold field names only, not a ${describe(step)}`);
  const name = String(step.value);
  if (name.includes('`')) refuse(path, 'a field name in a predicate may not hold a backquote');
  return `\`${name}\``;
}

/**
 * The context variable `root` names (IBM: "message.body", "log.request_body"): a path of plain
 * field names, as a variable name for `FlowContext.get`.
 * @throws PolicyCompileError (rule `redact-root`).
 */
export function readRoot(source: string, path: string): string {
  const refuseRoot = (reason: string): never => {
    throw new PolicyCompileError(path, 'redact-root', reason);
  };
  let steps: Node[];
  try {
    steps = stepsOf(parse(source, path, 'root'), path, 'root');
  } catch (error) {
    return refuseRoot((error as Error).message.slice(path.length + 2));
  }
  const names = steps.map((step) => {
    if (step.type !== 'name' || Object.keys(step).some((key) => !['type', 'value', 'position'].includes(key)))
      refuseRoot('root must name a context variable with plain field names (message.body)');
    const name = String(step.value);
    if (isPrototypeKey(name) || /[.[\]'"\s]/.test(name) || name === '')
      refuseRoot(`root's field "${name}" cannot be part of a context variable name`);
    return name;
  });
  return names.join('.');
}
