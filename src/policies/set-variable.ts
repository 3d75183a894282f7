/**
 * `set-variable` (IBM "set-variable"): each action sets, adds to or clears a context variable.
 * A `value` may hold `$(name)` references, substituted per request from API properties (fixed
 * at publish time) and context variables; `type` converts the result.
 */
import { oneOfStrings, policy, str } from './schema-kit.ts';
import { definePolicy, problemsOf } from './policy.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalArray, readBlock, titleOf } from './policy-config.ts';
import { prototypeSegment, splitPath } from './variable-names.ts';

export type VariableType = 'string' | 'number' | 'boolean' | 'object' | 'any';

export interface SetVariableConfig {
  version?: string;
  title?: string;
  actions: Array<{ set?: string; add?: string; clear?: string; value?: unknown; type?: VariableType }>;
}

const types: VariableType[] = ['string', 'number', 'boolean', 'object', 'any'];

/** A value template: literal text and variable names, split once at publish time. */
type TemplatePart = { literal: string } | { variable: string };

/** Reads the value of a template per request; a lone `$(name)` keeps the variable's own type. */
type ValueSource = (ctx: FlowContext) => unknown;

/** Splits `a $(x) b` into parts; API properties are folded in as literals. */
export function compileTemplate(text: string, properties: Record<string, string>): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$\(([^)\s]+)\)/g)) {
    if (match.index > last) parts.push({ literal: text.slice(last, match.index) });
    const name = match[1];
    parts.push(Object.hasOwn(properties, name) ? { literal: properties[name] } : { variable: name });
    last = match.index + match[0].length;
  }
  if (last < text.length) parts.push({ literal: text.slice(last) });
  return mergeLiterals(parts);
}

function mergeLiterals(parts: TemplatePart[]): TemplatePart[] {
  const merged: TemplatePart[] = [];
  for (const part of parts) {
    const previous = merged[merged.length - 1];
    if ('literal' in part && previous !== undefined && 'literal' in previous) previous.literal += part.literal;
    else merged.push(part);
  }
  return merged;
}

function stringOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function valueSource(value: unknown, properties: Record<string, string>): ValueSource {
  if (typeof value !== 'string') return () => value;
  const parts = compileTemplate(value, properties);
  if (parts.length === 0) return () => '';
  if (parts.length === 1) {
    const only = parts[0];
    if ('literal' in only) return () => only.literal;
    return (ctx) => ctx.get(only.variable);
  }
  return function substitute(ctx) {
    let out = '';
    for (const part of parts) out += 'literal' in part ? part.literal : stringOf(ctx.get(part.variable));
    return out;
  };
}

/** Converts a value to the action's `type`; throws a plain Error the caller wraps. */
export function convertValue(value: unknown, type: VariableType): unknown {
  switch (type) {
    case 'any':
      return value;
    case 'string':
      return stringOf(value);
    case 'number': {
      const number =
        typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (Number.isNaN(number)) throw new Error(`${JSON.stringify(value)} is not a number`);
      return number;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const text = stringOf(value).trim().toLowerCase();
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0' || text === '') return false;
      throw new Error(`${JSON.stringify(value)} is not a boolean`);
    }
    case 'object':
      if (typeof value !== 'string') return value;
      try {
        return JSON.parse(value);
      } catch {
        throw new Error(`${JSON.stringify(value)} is not a JSON object`);
      }
  }
}

type Action = (ctx: FlowContext) => void;

/** The set-variable policy. */
export const setVariablePolicy: PolicyType = definePolicy<SetVariableConfig>({
  name: 'set-variable',
  versions: ['1.0.0', '2.0.0'],
  description: 'Sets, adds (headers) or clears context variables.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    {
      actions: {
        type: 'array',
        default: [],
        description: 'Variable actions, in order.',
        items: {
          type: 'object',
          additionalProperties: false,
          anyOf: [{ required: ['set'] }, { required: ['add'] }, { required: ['clear'] }],
          properties: {
            set: str('Variable to set, e.g. message.headers.x-trace.'),
            add: str('Header variable to which a value is added.'),
            clear: str('Variable to clear.'),
            value: {
              type: ['string', 'number', 'boolean', 'object', 'array', 'null'],
              description: 'Value; $(var) is substituted in strings.',
            },
            type: oneOfStrings(
              ['string', 'number', 'boolean', 'object', 'any'],
              'How value is typed before it is stored.',
              'any',
            ),
          },
        },
      },
    },
    ['actions'],
  ),
  check: (config: SetVariableConfig, _scope: CheckScope, path: string) =>
    problemsOf(() =>
      (config.actions ?? []).forEach((entry, index) => checkAction(entry, `${path}.actions[${index}]`, {})),
    ),
  compile(config: SetVariableConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, setVariablePolicy, path);
    const title = titleOf(block, 'set-variable');
    const actions = optionalArray(block, 'actions', path).map((entry, index) =>
      compileAction(entry, `${path}.actions[${index}]`, api, title),
    );
    return function setVariableStep(ctx: FlowContext) {
      for (const action of actions) action(ctx);
    };
  },
});

/**
 * What can be known of an action without the catalog (its properties): its one verb, a variable
 * name that reaches no prototype, a known type and, for a value with no `$(…)`, one that converts
 * to it. Run at import (the policy's check) and again at compile.
 */
function checkAction(entry: unknown, path: string, properties: Record<string, string>) {
  if (typeof entry !== 'object' || entry === null)
    throw new PolicyCompileError(path, 'type', 'an action must be an object');
  const action = entry as Record<string, unknown>;
  const verbs = (['set', 'add', 'clear'] as const).filter((verb) => action[verb] !== undefined);
  if (verbs.length !== 1)
    throw new PolicyCompileError(path, 'set-variable-action', 'an action needs exactly one of `set`, `add` or `clear`');
  const verb = verbs[0];
  const name = action[verb];
  if (typeof name !== 'string' || name === '')
    throw new PolicyCompileError(`${path}.${verb}`, 'type', 'the variable name must be a non-empty string');
  const reached = prototypeSegment(splitPath(name));
  if (reached !== undefined) {
    throw new PolicyCompileError(
      `${path}.${verb}`,
      'variable-name',
      `the segment "${reached}" of ${name} would reach a prototype`,
    );
  }
  const type = (action.type ?? 'any') as VariableType;
  if (verb !== 'clear' && !types.includes(type))
    throw new PolicyCompileError(`${path}.type`, 'enum', `type must be one of ${types.join(', ')}`);
  const source = valueSource(action.value ?? '', properties);
  if (verb !== 'clear' && (typeof action.value !== 'string' || !action.value.includes('$('))) {
    // A literal converts now, so a bad literal fails the import and the publish, not a request.
    try {
      convertValue(source(undefined as never), type);
    } catch (error) {
      throw new PolicyCompileError(`${path}.value`, 'type', (error as Error).message);
    }
  }
  return { verb, name, type, source };
}

function compileAction(entry: unknown, path: string, api: CompiledApiInfo, title: string): Action {
  const { verb, name, type, source } = checkAction(entry, path, api.properties);
  if (verb === 'clear') return (ctx) => ctx.clear(name);
  const isHeader = /(^|\.)headers\.[^.]+$/.test(name);
  function resolved(ctx: FlowContext): unknown {
    try {
      return convertValue(source(ctx), type);
    } catch (error) {
      throw new AssemblyError('RuntimeError', `set-variable ${name}: ${(error as Error).message}`, {
        policy: title,
        cause: error,
      });
    }
  }
  if (verb === 'set') return (ctx) => ctx.set(name, resolved(ctx));
  return function addValue(ctx) {
    const value = resolved(ctx);
    const current = ctx.get(name);
    if (current === undefined || current === null || current === '') ctx.set(name, isHeader ? stringOf(value) : value);
    // Repeated header values combine into one comma-separated field (RFC 9110 §5.3).
    else if (isHeader) ctx.set(name, `${stringOf(current)}, ${stringOf(value)}`);
    // A new list, not a push: the one read may be shared with other requests (frozen).
    else if (Array.isArray(current)) ctx.set(name, [...(current as unknown[]), value]);
    else ctx.set(name, [current, value]);
  };
}
