/**
 * Turns a policy module's {@link PolicySpec} into the registry's {@link PolicyType}: one reading
 * of a YAML block — object shape, schema, version, defaults, then the policy's own check — used
 * both by the import check (which collects every problem) and by the gateway's flow compiler
 * (which throws the first), so the two cannot disagree about a block.
 */
import { isRecord } from '../definitions/json-path.ts';
import { describe, schemaProblems, withDefaults } from '../definitions/schema-validator.ts';
import { PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, PolicyProblem, PolicySpec, PolicyType } from './types.ts';

type Reading<C> = { config: C; problems: [] } | { config: undefined; problems: PolicyProblem[] };

/** The registry's view of a policy module; `C` stays inside (no casts at registration). */
export function definePolicy<C>(spec: PolicySpec<C>): PolicyType {
  // The schema guarantees the shape `C` describes; this is the one place that says so.
  const read = (block: unknown, scope: CheckScope, path: string): Reading<C> => {
    const problems = blockProblems(spec, block, path);
    if (problems.length > 0 || !isRecord(block)) return { config: undefined, problems };
    const config = withDefaults(spec.schema, block) as C;
    const found = spec.check?.(config, scope, path) ?? [];
    return found.length === 0 ? { config, problems: [] } : { config: undefined, problems: found };
  };
  return Object.freeze({
    name: spec.name,
    versions: Object.freeze([...spec.versions]),
    description: spec.description,
    schema: spec.schema,
    check: (block: unknown, scope: CheckScope, path: string) => read(block, scope, path).problems,
    compile(block: unknown, api: CompiledApiInfo, path: string) {
      const reading = read(block, compileScope(api), path);
      if (reading.config === undefined) throw compileError(reading.problems[0]);
      return spec.compile(reading.config, api, path);
    },
  });
}

function blockProblems(spec: PolicySpec<unknown>, block: unknown, path: string): PolicyProblem[] {
  if (!isRecord(block)) {
    return [
      {
        path,
        rule: 'type',
        reason: `must be object (the ${spec.name} policy's fields), got ${describe(block)}`,
      },
    ];
  }
  const problems: PolicyProblem[] = schemaProblems(spec.schema, block, path);
  if (typeof block.version === 'string' && !spec.versions.includes(block.version)) {
    problems.push({
      path: `${path}.version`,
      rule: 'unsupported-version',
      reason: `${spec.name} version ${block.version} is not supported; accepted versions: ${spec.versions.join(', ')}`,
    });
  }
  return problems;
}

// Nested lists are checked when compileFlow reads their entries.
function compileScope(api: CompiledApiInfo): CheckScope {
  return {
    document: api.document,
    operations: api.operations,
    enclosing: api.enclosing,
    checkFlow: () => [],
  };
}

/** Runs a compile-time reader (conditions, syntax) for its verdict only: its PolicyCompileError as a problem. */
export function problemsOf(read: () => unknown): PolicyProblem[] {
  try {
    read();
    return [];
  } catch (error) {
    if (!(error instanceof PolicyCompileError)) throw error;
    return [{ path: error.path, rule: error.rule, reason: error.message.slice(error.path.length + 2) }];
  }
}

function compileError(problem: PolicyProblem): PolicyCompileError {
  return new PolicyCompileError(problem.path, problem.rule, problem.reason);
}
