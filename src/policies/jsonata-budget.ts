/**
 * The budget of one JSONata evaluation at the gateway (switch/if conditions, map values). A
 * provider expression meets consumer data there: a filter inside a filter over a large body, a
 * range sized by a query parameter, a recursive function, `$eval` of request text. Each
 * evaluation gets a step budget, a time budget and a nesting bound; past one, it fails with
 * `RuntimeError` (`GW_EXPRESSION_BUDGET`). A long evaluation also gives the event loop a turn
 * every few milliseconds, so other calls on the gateway are answered while it runs.
 *
 * jsonata 2.x calls the function bound to `Symbol.for('jsonata.__evaluate_entry')` before every
 * evaluation step, awaiting what it returns, and keeps the step nesting in
 * `environment.base.depth`; `$eval` evaluates in the calling environment, so its steps, its
 * nesting, its sequences and its regex literals (refused: linear-regex-engine.ts) are this
 * evaluation's. The `sequence` option bounds every sequence and range, which bounds the work of
 * one built-in call (`$sum`, `$sort`, …), the one thing the step hook cannot interrupt.
 */
import { performance } from 'node:perf_hooks';
import type jsonata from 'jsonata';
import { PorticoError } from '../errors.ts';
import { AssemblyError } from './types.ts';
import type { FlowContext } from './types.ts';

/** The limits of one evaluation (docs/policies.md, "JSONata evaluation limits"). */
export const jsonataLimits = Object.freeze({
  /** Evaluation steps (one per node of the expression evaluated, per item of a path). */
  steps: 1_000_000,
  /** Milliseconds spent evaluating, turns given to other calls not counted. */
  milliseconds: 1_000,
  /** Nested steps: a recursive function takes about 3 a call, so about 500 calls deep. */
  depth: 1_500,
  /** Values in one sequence, array built by a range (`[1..n]`) or appended list. */
  sequence: 100_000,
});

/** How long JSONata may hold the event loop before it gives other calls a turn, in ms. */
const turnMs = 10;
/** The clock is read once every this many steps (a power of two). */
const clockEvery = 1024;
// A name JSONata's lexer cannot produce (a space in it): no expression, `$eval`'d text included,
// can read or rebind it (a review switched every limit off with `$__porticoBudget := {…}`).
const budgetBinding = 'portico budget';
const entryHook = Symbol.for('jsonata.__evaluate_entry');

/** The error of an evaluation past its budget: `RuntimeError`, 500, as other run-time failures. */
export class ExpressionBudgetError extends AssemblyError {
  readonly code = 'GW_EXPRESSION_BUDGET';

  constructor(expression: string, reason: string) {
    super('RuntimeError', new PorticoError('GW_EXPRESSION_BUDGET', { expression, reason }).message);
  }
}

class Budget {
  steps = 0;
  /** Milliseconds spent before the last turn given away. */
  spent = 0;
  resumedAt = performance.now();
  exceeded: ExpressionBudgetError | undefined;

  constructor(readonly expression: string) {}

  fail(reason: string): never {
    this.exceeded ??= new ExpressionBudgetError(this.expression, reason);
    throw this.exceeded;
  }

  /** Fails past the time budget; past the turn, gives the event loop a turn (a promise). */
  checkClock(): Promise<void> | undefined {
    const now = performance.now();
    if (this.spent + (now - this.resumedAt) > jsonataLimits.milliseconds)
      this.fail(`it ran longer than ${jsonataLimits.milliseconds} ms`);
    if (now - turnStart(now) <= turnMs) return undefined;
    this.spent += now - this.resumedAt;
    return nextTurn().then(() => {
      this.resumedAt = performance.now();
    });
  }
}

type Environment = { base: { depth: number; lookup(name: string): unknown } };

function enter(_node: unknown, _input: unknown, environment: Environment): Promise<void> | undefined {
  const budget = environment.base.lookup(budgetBinding);
  if (!(budget instanceof Budget)) throw new Error('JSONata evaluation without its budget');
  if (budget.exceeded !== undefined) throw budget.exceeded;
  const steps = ++budget.steps;
  if (environment.base.depth > jsonataLimits.depth)
    budget.fail(`it nested deeper than ${jsonataLimits.depth} steps (a recursion too deep?)`);
  if (steps > jsonataLimits.steps) budget.fail(`it took more than ${jsonataLimits.steps} steps`);
  return (steps & (clockEvery - 1)) === 0 ? budget.checkClock() : undefined;
}

// When the event loop's current turn began running JSONata: set by the first evaluation of a
// turn, cleared by a callback queued for the loop's next turn.
let turnStartedAt = 0;
let turnMarked = false;

function turnStart(now: number): number {
  if (!turnMarked) {
    turnMarked = true;
    turnStartedAt = now;
    setImmediate(() => {
      turnMarked = false;
    });
  }
  return turnStartedAt;
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The options every gateway expression is parsed with. */
export function budgetOptions(RegexEngine: RegExpConstructor): jsonata.JsonataOptions {
  return { RegexEngine, sequence: jsonataLimits.sequence } as jsonata.JsonataOptions;
}

/** Installs the step hook on a parsed expression (once, at publish time). */
export function installBudget(expression: jsonata.Expression): void {
  expression.assign(entryHook as unknown as string, enter);
}

// jsonata's own bounds, met inside the budget's: a range over 1e7 values, a sequence too long.
const sequenceCodes = new Set(['D2014', 'D2015']);

function jsonataCode(error: unknown): string | undefined {
  // `$eval` wraps an error of the text it evaluates (D3121) with the original as `error`.
  for (let current = error, hops = 0; typeof current === 'object' && current !== null && hops < 8; hops++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && sequenceCodes.has(code)) return code;
    current = (current as { error?: unknown }).error;
  }
  return undefined;
}

/**
 * A run-time error of JSONata itself (a type error on the data, an undefined function: its
 * codes are a letter and four digits) is the expression's failure, `RuntimeError` as API
 * Connect raises it, not a defect of the gateway; anything else is passed on as it is.
 */
function runtimeError(error: unknown, name: string): unknown {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || !/^[A-Z]\d{4}$/.test(code)) return error;
  return new AssemblyError('RuntimeError', `The JSONata expression ${name} failed: ${code} ${String(message)}`, {
    cause: error,
  });
}

/**
 * Evaluates `expression` (installBudget'ed) on `input` within the budget; `name` says which
 * expression failed (its definition path), in the answer and the gateway's log.
 * @throws ExpressionBudgetError past a limit; AssemblyError `RuntimeError` for jsonata's own errors.
 */
export async function evaluateWithinBudget(
  expression: jsonata.Expression,
  input: unknown,
  bindings: Record<string, unknown>,
  ctx: FlowContext,
  name: string,
): Promise<unknown> {
  const budget = new Budget(name);
  if (budget.resumedAt - turnStart(budget.resumedAt) > turnMs) {
    await nextTurn();
    budget.resumedAt = performance.now();
  }
  try {
    bindings[budgetBinding] = budget;
    return await expression.evaluate(input, bindings);
  } catch (error) {
    const exceeded =
      budget.exceeded ??
      (jsonataCode(error) === undefined
        ? undefined
        : new ExpressionBudgetError(name, `it built a sequence of more than ${jsonataLimits.sequence} values`));
    if (exceeded === undefined) throw runtimeError(error, name);
    ctx.log.warn({ expression: name, steps: budget.steps, reason: exceeded.message }, 'JSONata evaluation stopped');
    throw exceeded;
  }
}
