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
    propertySets: [api.properties],
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

// At import, a reading that failed with the document's own values is tried again with up to
// three other combinations of the values it looks at, from at most 16 catalogs; a document that
// gives more catalogs values of their own, or more combinations, leaves it to each catalog's
// publish. Each reading costs a compile, and the import stays linear in the document.
const maxReadings = 4;
const maxCatalogs = 16;

/**
 * The verdict of a reading that depends on the API properties (a URL with `$(name)` in it): its
 * problems when it fails with every set of values the block may be compiled with (the first
 * set's problems), none when some catalog could compile it: that catalog's publish judges then.
 * Sets are told apart only by the properties the first reading looked at, so what uses no
 * property is read once, and catalogs agreeing on those values count once.
 */
export function problemsInEveryCatalog(
  propertySets: CheckScope['propertySets'],
  read: (properties: Readonly<Record<string, string>>) => unknown,
): PolicyProblem[] {
  const [own, ...others] = propertySets;
  if (own === undefined) return problemsOf(() => read({}));
  const watched = watchReads(own);
  const first = problemsOf(() => read(watched.view));
  if (first.length === 0) return [];
  const looked = watched.names();
  if (looked?.size === 0) return first; // no property looked at: the same verdict in every catalog
  if (others.length > maxCatalogs) return [];
  const keyOf = (properties: Readonly<Record<string, string>>, index: number): string =>
    looked === undefined
      ? String(index)
      : JSON.stringify([...looked].map((name) => (Object.hasOwn(properties, name) ? properties[name] : null)));
  const ownKey = keyOf(own, -1);
  const other = new Map<string, Readonly<Record<string, string>>>();
  for (const [index, properties] of others.entries()) {
    const key = keyOf(properties, index);
    if (key !== ownKey) other.set(key, properties);
    if (other.size >= maxReadings) return [];
  }
  for (const properties of other.values()) if (problemsOf(() => read(properties)).length === 0) return [];
  return first;
}

/** A view of `properties` that records the names read through it; `names()` is undefined once it was listed whole. */
function watchReads(properties: Readonly<Record<string, string>>) {
  const names = new Set<string>();
  let listed = false;
  const note = (key: string | symbol): void => {
    if (typeof key === 'string') names.add(key);
  };
  const view = new Proxy(properties, {
    get(target, key) {
      note(key);
      return Reflect.get(target, key);
    },
    has(target, key) {
      note(key);
      return Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      note(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    ownKeys(target) {
      listed = true;
      return Reflect.ownKeys(target);
    },
  });
  return { view, names: () => (listed ? undefined : names) };
}

function compileError(problem: PolicyProblem): PolicyCompileError {
  return new PolicyCompileError(problem.path, problem.rule, problem.reason);
}
