/**
 * The map policy's actions compiled into a plan (IBM "map": "Each entry includes either a set
 * or create field … An action can also contain a from field … a value field … or a foreach
 * field and a new actions section"). Every path is split into segments and every `value`
 * expression compiled here, at publish time.
 */
import { AssemblyError, PolicyCompileError } from '../types.ts';
import type { FlowContext } from '../types.ts';
import type { DocumentOnly } from '../policy-config.ts';
import { compileExpression } from '../conditions.ts';
import { convertTo, itemsOf, nodeAt } from './schema-types.ts';
import type { TypedNode } from './schema-types.ts';
import type { JSONSchema } from '../types.ts';
import { prototypeSegment, splitPath as splitVariablePath } from '../variable-names.ts';

/** What an action reads from: the decoded inputs, or the current `foreach` item. */
export interface MapScope {
  ctx: FlowContext;
  inputs: Record<string, unknown>;
  item: unknown;
}

/** A compiled action: writes into `holder` (the outputs record, or a foreach element). */
export type MapAction = (scope: MapScope, holder: Record<string, unknown>) => void | Promise<void>;

/** Where actions at one level read and write. */
export interface ActionLevel {
  api: DocumentOnly;
  title: string;
  /** Top level: input names (paths start with one). Inside foreach: undefined (paths are relative to the item). */
  inputs: Set<string> | undefined;
  /** Top level: output name → schema. Inside foreach: undefined. */
  outputs: Map<string, JSONSchema | undefined> | undefined;
  /** Inside foreach: the element's schema node. */
  element: TypedNode | undefined;
}

/**
 * Splits `a.b[0]['c.d']` into segments (done once per path, at publish time); a segment that
 * names a prototype link (`__proto__`, `prototype`, `constructor`) fails the publish.
 */
export function splitPath(path: string, at: string): string[] {
  const segments = splitVariablePath(path);
  const reached = prototypeSegment(segments);
  if (reached !== undefined)
    throw new PolicyCompileError(at, 'map-path', `the segment "${reached}" of ${path} would reach a prototype`);
  return segments;
}

/** Walks `segments` from `node`; a list met on the way is mapped over, as a map source reads it. */
export function walk(node: unknown, segments: string[], start = 0): unknown {
  let current = node;
  for (let i = start; i < segments.length; i++) {
    const segment = segments[i];
    if (Array.isArray(current) && !/^\d+$/.test(segment)) {
      const values = current
        .map((element) => walk(element, segments, i))
        .filter((value) => value !== undefined)
        .flat();
      return values.length === 0 ? undefined : values;
    }
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function writePath(holder: Record<string, unknown>, segments: string[], value: unknown): void {
  let node = holder;
  for (let i = 0; i < segments.length - 1; i++) {
    const next = Object.hasOwn(node, segments[i]) ? node[segments[i]] : undefined;
    if (typeof next !== 'object' || next === null) node[segments[i]] = {};
    node = node[segments[i]] as Record<string, unknown>;
  }
  node[segments[segments.length - 1]] = value;
}

type Source = (scope: MapScope) => unknown;

function compileSource(path: string, at: string, level: ActionLevel): Source {
  const segments = splitPath(path, at);
  if (segments.length === 0) throw new PolicyCompileError(at, 'map-path', 'a source path must not be empty');
  if (level.inputs === undefined) return (scope) => walk(scope.item, segments);
  const input = segments[0];
  if (!level.inputs.has(input)) {
    throw new PolicyCompileError(
      at,
      'unknown-input',
      `"${path}" does not start with an input name (inputs: ${[...level.inputs].join(', ') || 'none'})`,
    );
  }
  return (scope) => walk(scope.inputs[input], segments, 1);
}

function stringOf(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** Reads `from` (one path, or a list whose defined values are concatenated unless `value` uses them). */
function compileFrom(from: unknown, at: string, level: ActionLevel, joined: boolean): Source | undefined {
  if (from === undefined || from === null) return undefined;
  if (typeof from === 'string') return compileSource(from, at, level);
  if (!Array.isArray(from) || from.length === 0 || from.some((entry) => typeof entry !== 'string')) {
    throw new PolicyCompileError(at, 'type', '`from` must be a path or a non-empty list of paths');
  }
  const sources = from.map((entry, index) => compileSource(entry as string, `${at}[${index}]`, level));
  if (!joined) return (scope) => sources.map((source) => source(scope));
  return function concatenated(scope) {
    const values = sources.map((source) => source(scope)).filter((value) => value !== undefined);
    return values.length === 0 ? undefined : values.map(stringOf).join('');
  };
}

interface Target {
  segments: string[];
  node: TypedNode;
}

function compileTarget(action: Record<string, unknown>, at: string, level: ActionLevel): Target {
  const key = action.set !== undefined ? 'set' : 'create';
  if ((action.set === undefined) === (action.create === undefined)) {
    throw new PolicyCompileError(at, 'map-action', 'an action needs exactly one of `set` or `create`');
  }
  const path = action[key];
  if (typeof path !== 'string' || path === '')
    throw new PolicyCompileError(`${at}.${key}`, 'type', `\`${key}\` must be a non-empty path`);
  const segments = splitPath(path, `${at}.${key}`);
  if (level.outputs === undefined)
    return { segments, node: nodeAt(level.element?.schema, segments, level.api, `${at}.${key}`, level.element?.base) };
  const output = segments[0];
  if (!level.outputs.has(output)) {
    throw new PolicyCompileError(
      `${at}.${key}`,
      'unknown-output',
      `"${path}" does not start with an output name (outputs: ${[...level.outputs.keys()].join(', ') || 'none'})`,
    );
  }
  return { segments, node: nodeAt(level.outputs.get(output), segments.slice(1), level.api, `${at}.${key}`) };
}

function converter(node: TypedNode, where: string, title: string): (value: unknown) => unknown {
  if (node.type === undefined || node.type === 'object' || node.type === 'array') return (value) => value;
  const type = node.type;
  return function convert(value) {
    const converted = convertTo(type, value);
    if (converted instanceof Error) {
      throw new AssemblyError('TransformError', `map ${title}: cannot write ${where}: ${converted.message}`, {
        status: 500,
        policy: title,
      });
    }
    return converted;
  };
}

/** Compiles a list of actions at one level. */
export function compileActions(entries: unknown, at: string, level: ActionLevel): MapAction[] {
  if (entries === undefined || entries === null) return [];
  if (!Array.isArray(entries)) throw new PolicyCompileError(at, 'type', '`actions` must be a list');
  return entries.map((entry, index) => compileAction(entry, `${at}[${index}]`, level));
}

function compileAction(entry: unknown, at: string, level: ActionLevel): MapAction {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw new PolicyCompileError(at, 'type', 'an action must be an object');
  const action = entry as Record<string, unknown>;
  const target = compileTarget(action, at, level);
  const where = String(action.set ?? action.create);
  if (action.value !== undefined && typeof action.value !== 'string')
    throw new PolicyCompileError(`${at}.value`, 'type', '`value` must be a JSONata expression string');
  const expression = typeof action.value === 'string' ? compileExpression(action.value, `${at}.value`) : undefined;
  const fallback = action.default;
  if (action.foreach !== undefined) return compileForeach(action, at, level, target, where, expression);
  if (action.actions !== undefined)
    throw new PolicyCompileError(`${at}.actions`, 'map-action', 'nested `actions` need a `foreach`');
  const source = compileFrom(action.from, `${at}.from`, level, expression === undefined);
  if (source === undefined && expression === undefined && fallback === undefined) {
    throw new PolicyCompileError(at, 'map-action', 'an action needs `from`, `value` or `default`');
  }
  const convert = converter(target.node, where, level.title);
  const write = (holder: Record<string, unknown>, value: unknown): void => {
    const chosen = value === undefined ? fallback : value;
    if (chosen !== undefined) writePath(holder, target.segments, convert(chosen));
  };
  if (expression === undefined) {
    return function setAction(scope, holder) {
      write(holder, source === undefined ? undefined : source(scope));
    };
  }
  return async function valueAction(scope, holder) {
    const input = source === undefined ? (level.inputs === undefined ? scope.item : scope.inputs) : source(scope);
    // IBM "map": `default` applies when the `from` source is missing.
    if (
      source !== undefined &&
      (input === undefined ||
        (Array.isArray(action.from) && (input as unknown[]).every((value) => value === undefined)))
    ) {
      write(holder, undefined);
      return;
    }
    write(holder, await expression(input, scope.ctx));
  };
}

function compileForeach(
  action: Record<string, unknown>,
  at: string,
  level: ActionLevel,
  target: Target,
  where: string,
  expression: ((input: unknown, ctx: FlowContext) => Promise<unknown>) | undefined,
): MapAction {
  if (typeof action.foreach !== 'string')
    throw new PolicyCompileError(`${at}.foreach`, 'type', '`foreach` must be a source path');
  if (action.from !== undefined)
    throw new PolicyCompileError(
      `${at}.from`,
      'map-action',
      'an action with `foreach` reads its items from `foreach`; remove `from`',
    );
  const items = compileSource(action.foreach, `${at}.foreach`, level);
  const element = itemsOf(target.node, level.api, `${at}.${action.set !== undefined ? 'set' : 'create'}`);
  const nested = compileActions(action.actions, `${at}.actions`, {
    api: level.api,
    title: level.title,
    inputs: undefined,
    outputs: undefined,
    element,
  });
  const convert = converter(element, `${where}[]`, level.title);
  return async function foreachAction(scope, holder) {
    const found = items(scope);
    if (found === undefined) {
      if (action.default !== undefined) writePath(holder, target.segments, action.default);
      return;
    }
    const list = Array.isArray(found) ? found : [found];
    const out: unknown[] = [];
    for (const item of list) {
      const itemScope: MapScope = { ctx: scope.ctx, inputs: scope.inputs, item };
      if (nested.length > 0) {
        const built: Record<string, unknown> = {};
        await runActions(nested, itemScope, built);
        out.push(built);
      } else {
        out.push(convert(expression === undefined ? item : await expression(item, scope.ctx)));
      }
    }
    writePath(holder, target.segments, out);
  };
}

/** Runs actions in order, staying synchronous until an action returns a promise. */
export function runActions(
  actions: MapAction[],
  scope: MapScope,
  holder: Record<string, unknown>,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < actions.length; i++) {
    const pending = actions[i](scope, holder);
    if (pending !== undefined) return pending.then(() => runActions(actions, scope, holder, i + 1));
  }
}
