/**
 * The flow compiler: turns an assembly (`execute`, `catch`, `finally`) into one step, once per
 * publish. Each policy entry `{ <policy-name>: <config> }` is compiled by its policy type;
 * errors raised while running go to the first `catch` case naming the error, else `default`
 * (IBM "Error cases supported by assembly catches"); `finally` always runs.
 */
import { rawOperations } from '../definitions/api-operations.ts';
import type { PolicyRegistry } from '../policies/registry.ts';
import { AssemblyError, ConsumerClosedError, PolicyCompileError } from '../policies/types.ts';
import type { CompiledApiInfo, FlowContext, Step } from '../policies/types.ts';

export type { PolicyRegistry };

export interface AssemblyDoc {
  execute: unknown[];
  catch?: unknown[];
  finally?: unknown[];
}

/** Settings + API facts a flow needs, without what is added here (operations, nesting, compileFlow). */
export type ApiCompileInput = Omit<CompiledApiInfo, 'compileFlow' | 'operations' | 'enclosing'>;

/** Compiles a list of policy entries into one sequential step. */
export function compileSteps(entries: unknown[], path: string, api: CompiledApiInfo, registry: PolicyRegistry): Step {
  const steps: Step[] = entries.map((entry, index) => compileEntry(entry, `${path}[${index}]`, api, registry));
  if (steps.length === 0) return function emptyFlow() {};
  if (steps.length === 1) return steps[0];
  // Steps that finish synchronously (a cached check, a header set) run without a promise; the
  // first step that returns one continues the rest asynchronously. Only while a step waits can
  // the consumer leave: then the flow ends there rather than run the rest (backend calls
  // included) for nobody.
  async function after(pending: Promise<void>, next: number, ctx: FlowContext): Promise<void> {
    await pending;
    for (let index = next; index < steps.length; index++) {
      if (ctx.consumerGone) throw new ConsumerClosedError();
      const more = steps[index](ctx);
      if (more !== undefined) await more;
    }
  }
  return function sequence(ctx: FlowContext) {
    for (let index = 0; index < steps.length; index++) {
      const pending = steps[index](ctx);
      if (pending !== undefined) return index + 1 === steps.length ? pending : after(pending, index + 1, ctx);
    }
    return undefined;
  };
}

function compileEntry(entry: unknown, path: string, api: CompiledApiInfo, registry: PolicyRegistry): Step {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new PolicyCompileError(
      path,
      'policy-entry',
      'each assembly entry must be an object with one policy name as its key',
    );
  }
  const keys = Object.keys(entry);
  if (keys.length !== 1) {
    throw new PolicyCompileError(
      path,
      'policy-entry',
      `each assembly entry must have exactly one policy key, found ${keys.length}`,
    );
  }
  const name = keys[0];
  const type = registry[name];
  if (type === undefined) throw new PolicyCompileError(path, 'unknown-policy', `unknown policy "${name}"`);
  // Blocks nested in this one are compiled knowing their enclosing policies (operation-switch checks it).
  const nested: CompiledApiInfo = {
    ...api,
    enclosing: [...api.enclosing, name],
    compileFlow: (steps, at) => compileSteps(steps, at, nested, registry),
  };
  const own: CompiledApiInfo = { ...api, compileFlow: nested.compileFlow };
  return type.compile((entry as Record<string, unknown>)[name], own, `${path}.${name}`);
}

interface CatchCase {
  errors: Set<string> | 'default';
  step: Step;
}

/** Compiles a whole assembly into one step that applies catch and finally. */
export function compileAssembly(
  assembly: AssemblyDoc,
  input: ApiCompileInput,
  registry: PolicyRegistry,
  root = '$.x-ibm-configuration.assembly',
): Step {
  const operations = rawOperations(input.document).map(({ id, verb, path }) => ({ id, verb, path }));
  const api: CompiledApiInfo = {
    ...input,
    operations,
    enclosing: [],
    compileFlow: (entries, path) => compileSteps(entries, path, api, registry),
  };
  const execute = compileSteps(assembly.execute ?? [], `${root}.execute`, api, registry);
  const catches = compileCatches(assembly.catch ?? [], `${root}.catch`, api, registry);
  const final =
    assembly.finally && assembly.finally.length > 0
      ? compileSteps(assembly.finally, `${root}.finally`, api, registry)
      : undefined;
  if (catches.length === 0 && final === undefined) return execute;
  return async function assemblyWithCatch(ctx: FlowContext) {
    try {
      await execute(ctx);
    } catch (error) {
      const handler = findCatch(catches, error);
      if (handler === undefined) throw error;
      ctx.set('error', describeError(error));
      await handler(ctx);
    } finally {
      if (final !== undefined) await final(ctx);
    }
  };
}

function compileCatches(entries: unknown[], path: string, api: CompiledApiInfo, registry: PolicyRegistry): CatchCase[] {
  return entries.map((entry, index) => {
    const at = `${path}[${index}]`;
    const block = entry as Record<string, unknown>;
    if (Array.isArray(block.default))
      return { errors: 'default', step: compileSteps(block.default, `${at}.default`, api, registry) };
    if (!Array.isArray(block.errors) || !Array.isArray(block.execute)) {
      throw new PolicyCompileError(
        at,
        'catch-case',
        'a catch case needs `errors` and `execute` lists, or a `default` list',
      );
    }
    return {
      errors: new Set(block.errors.map(String)),
      step: compileSteps(block.execute, `${at}.execute`, api, registry),
    };
  });
}

/** API Connect's name for an error: the assembly error's name, else a runtime error. */
export function errorNameOf(error: unknown): string {
  return error instanceof AssemblyError ? error.errorName : 'RuntimeError';
}

function findCatch(catches: CatchCase[], error: unknown): Step | undefined {
  const name = errorNameOf(error);
  // UnauthorizedError and BadRequestError are not in the default catch (IBM catch errors page);
  // nor is Portico's ConsumerClosedError: a flow whose consumer left ends.
  const defaultable =
    name !== 'UnauthorizedError' && name !== 'BadRequestError' && name !== ConsumerClosedError.errorName;
  let fallback: Step | undefined;
  for (const entry of catches) {
    if (entry.errors === 'default') {
      if (defaultable && fallback === undefined) fallback = entry.step;
    } else if (entry.errors.has(name)) {
      return entry.step;
    }
  }
  return fallback;
}

/** The `error` context variable set when a catch runs. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof AssemblyError) {
    return {
      name: error.errorName,
      message: error.message,
      policy: error.policy,
      status: { code: error.status, reason: error.reason },
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { name: 'RuntimeError', message, status: { code: 500, reason: 'Internal Server Error' } };
}
