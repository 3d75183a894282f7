/**
 * Where a redaction path lands in the data: locations (a holder and a key), found by walking the
 * steps path.ts read, as JSONata evaluates a location path — a step is applied to each item of
 * the sequence before it (arrays are walked item by item), `**` is the item and every value
 * under it, an index or predicate filters the sequence one step produced for one item.
 *
 * The walk is iterative and bounded: no container is expanded twice by `**`, nesting deeper than
 * {@link maxRedactDepth} is refused, and predicates share one time and evaluation budget per
 * path (jsonata-budget.ts's limits); whatever is past a bound fails the policy, it never lets
 * content through unredacted.
 */
import { performance } from 'node:perf_hooks';
import { parseRawBody } from '../../gateway/context.ts';
import { truthy } from '../conditions.ts';
import { ExpressionBudgetError, jsonataLimits } from '../jsonata-budget.ts';
import { AssemblyError, RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';
import type { PathStep, Stage } from './path.ts';

/** Levels of nesting a walk goes through (DataPower's default JSON parse depth is 512). */
export const maxRedactDepth = 512;

export type Tree = Record<string, unknown> | unknown[];

/**
 * A place a value sits: `holder[key]`. `kind` says how to read it: the context's variables
 * (`context`, read through `ctx.get`), a header bag (names without case), a message body (which
 * must hold JSON data to be walked into), or plain data.
 */
export interface Location {
  holder: Tree | undefined;
  key: string | number;
  value: unknown;
  kind: 'context' | 'variable' | 'headers' | 'body' | 'plain';
  depth: number;
}

/** The error of content the policy cannot redact: `RedactionError`, 500. */
export function redactionError(message: string, policy: string, cause?: unknown): AssemblyError {
  return new AssemblyError('RedactionError', message, { status: 500, reason: 'Internal Server Error', policy, cause });
}

/** Values one path may visit (a 4 MiB body holds at most about two million). */
export const maxRedactVisits = 4_000_000;

/** One path's walk: where it runs, what it visited, the predicates' shared budget. */
interface Walk {
  ctx: FlowContext;
  path: string;
  policy: string;
  visits: number;
  evaluations: number;
  ms: number;
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Buffer.isBuffer(value) && !(value instanceof RawBody);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * Where `path` lands below `start`: every location selected, duplicates dropped.
 * @throws AssemblyError `RedactionError` for a body that is not JSON data on the way, or too deep.
 */
export async function selectLocations(
  steps: readonly PathStep[],
  start: Location,
  ctx: FlowContext,
  where: { path: string; policy: string },
): Promise<Location[]> {
  const walk: Walk = { ctx, path: where.path, policy: where.policy, visits: 0, evaluations: 0, ms: 0 };
  let current: Location[] = [start];
  for (const step of steps) {
    const next = new LocationSet();
    const items = step.selector.kind === 'self' ? current : current.flatMap((loc) => flatten(loc, walk));
    // Without a filter, `**` from items nested in one another need not expand a container twice.
    const seen = step.stages.length === 0 ? new Set<object>() : undefined;
    for (const item of items) {
      let found = expand(step, item, walk, seen);
      if (step.stages.length > 0) {
        found = found.flatMap((loc) => (Array.isArray(loc.value) ? itemsOf(loc, walk) : [loc]));
        for (const stage of step.stages) found = await applyStage(stage, found, walk);
      }
      for (const loc of found) next.add(loc);
    }
    current = next.list;
  }
  return current;
}

function expand(step: PathStep, item: Location, walk: Walk, seen: Set<object> | undefined): Location[] {
  const { selector } = step;
  switch (selector.kind) {
    case 'self':
      return [item];
    case 'name':
      if (item.kind === 'context') return variable(selector.name, walk);
      return fieldsOf(item, walk, (key) =>
        item.kind === 'headers' ? key.toLowerCase() === selector.name.toLowerCase() : key === selector.name,
      );
    case 'wildcard':
      return fieldsOf(item, walk, () => true);
    case 'descendants':
      return descendants(item, walk, seen ?? new Set());
  }
}

/** A context variable (the first step of a path without root; path.ts refuses any other there). */
function variable(name: string, walk: Walk): Location[] {
  const value = walk.ctx.get(name);
  return value === undefined ? [] : [{ holder: undefined, key: name, value, kind: 'variable', depth: 1 }];
}

function visit(walk: Walk, count: number): void {
  walk.visits += count;
  if (walk.visits > maxRedactVisits)
    throw redactionError(`the path visits more than ${maxRedactVisits} values; redact does not walk it`, walk.policy);
}

/** The items of a list value (one level), as locations. */
function itemsOf(loc: Location, walk: Walk): Location[] {
  const list = loc.value as unknown[];
  visit(walk, list.length);
  return list.map((value, key) => ({ holder: list, key, value, kind: 'plain', depth: loc.depth + 1 }));
}

/** A location as the items a step is applied to: a list's items, nested lists flattened. */
function flatten(loc: Location, walk: Walk): Location[] {
  checkWalkable(loc, walk.policy);
  if (!Array.isArray(loc.value)) return [loc];
  const out: Location[] = [];
  const stack: Location[] = [loc];
  while (stack.length > 0) {
    const top = stack.pop()!;
    if (!Array.isArray(top.value)) {
      out.push(top);
      continue;
    }
    if (top.depth > maxRedactDepth) throw tooDeep(walk.policy);
    stack.push(...itemsOf(top, walk).reverse());
  }
  return out;
}

/** Fails on a body that holds something else than JSON data (XML, text, bytes, a lone scalar). */
function checkWalkable(loc: Location, policy: string): void {
  if (loc.kind !== 'body' || isEmpty(loc.value) || isTree(loc.value)) return;
  const what =
    typeof loc.value === 'string'
      ? loc.value.trimStart().startsWith('<')
        ? 'XML'
        : 'text that is not JSON'
      : Buffer.isBuffer(loc.value)
        ? 'bytes'
        : `a JSON ${typeof loc.value}, not an object or a list`;
  throw redactionError(`redact reads JSON data only; the body holds ${what}`, policy);
}

function tooDeep(policy: string): AssemblyError {
  return redactionError(`the content nests deeper than ${maxRedactDepth} levels; redact does not walk it`, policy);
}

/** The fields of an object item whose key `matches`, as locations (a raw body is parsed in place, as ctx.get does). */
function fieldsOf(item: Location, walk: Walk, matches: (key: string) => boolean): Location[] {
  checkWalkable(item, walk.policy);
  const node = item.value;
  if (!isTree(node) || Array.isArray(node)) return [];
  const out: Location[] = [];
  const keys = Object.keys(node);
  visit(walk, keys.length);
  for (const key of keys) {
    if (!matches(key)) continue;
    const value = readField(node, key);
    if (value === undefined) continue;
    out.push({ holder: node, key, value, kind: kindOf(item, key), depth: item.depth + 1 });
  }
  return out;
}

function readField(node: Record<string, unknown>, key: string): unknown {
  const value = node[key];
  if (!(value instanceof RawBody)) return value;
  const parsed = parseRawBody(value);
  if (!Object.isFrozen(node)) node[key] = parsed;
  return parsed;
}

function kindOf(parent: Location, key: string): Location['kind'] {
  if (parent.kind === 'variable' && key === 'headers') return 'headers';
  if (parent.kind === 'variable' && key === 'body') return 'body';
  return 'plain';
}

/** `**`: the item (unless a list) and every value under it; no container twice, no deeper than the bound. */
function descendants(item: Location, walk: Walk, seen: Set<object>): Location[] {
  const out: Location[] = [];
  const stack: Location[] = [item];
  while (stack.length > 0) {
    const loc = stack.pop()!;
    checkWalkable(loc, walk.policy);
    if (!Array.isArray(loc.value)) out.push(loc);
    if (!isTree(loc.value) || seen.has(loc.value)) continue;
    seen.add(loc.value);
    if (loc.depth > maxRedactDepth) throw tooDeep(walk.policy);
    const children = Array.isArray(loc.value) ? itemsOf(loc, walk) : fieldsOf(loc, walk, () => true);
    stack.push(...children.reverse());
  }
  return out;
}

async function applyStage(stage: Stage, sequence: Location[], walk: Walk): Promise<Location[]> {
  if (stage.kind === 'indexes')
    return sequence.filter((_, index) => matchesIndex(stage.indexes, index, sequence.length));
  const kept: Location[] = [];
  for (const [index, loc] of sequence.entries()) {
    if (++walk.evaluations > jsonataLimits.sequence)
      throw new ExpressionBudgetError(walk.path, `its predicate ran on more than ${jsonataLimits.sequence} values`);
    const started = performance.now();
    const result = await stage.evaluate(loc.value, walk.ctx);
    walk.ms += performance.now() - started;
    if (walk.ms > jsonataLimits.milliseconds)
      throw new ExpressionBudgetError(walk.path, `its predicates ran longer than ${jsonataLimits.milliseconds} ms`);
    const numbers = typeof result === 'number' ? [result] : numberList(result);
    if (numbers !== undefined ? matchesIndex(numbers, index, sequence.length) : truthy(result)) kept.push(loc);
  }
  return kept;
}

function numberList(value: unknown): number[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number')
    ? (value as number[])
    : undefined;
}

/** JSONata's index rule: floored, negative from the end. */
function matchesIndex(indexes: readonly number[], index: number, length: number): boolean {
  return indexes.some((n) => {
    const floored = Math.floor(n);
    return (floored < 0 ? length + floored : floored) === index;
  });
}

/** Locations without repeats (one holder and key once), in the order found. */
class LocationSet {
  readonly list: Location[] = [];
  private readonly keys = new Map<object | undefined, Set<string | number>>();

  add(loc: Location): void {
    let keys = this.keys.get(loc.holder);
    if (keys === undefined) this.keys.set(loc.holder, (keys = new Set()));
    if (keys.has(loc.key)) return;
    keys.add(loc.key);
    this.list.push(loc);
  }
}
