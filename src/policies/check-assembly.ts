/**
 * The import-time check of an `x-ibm-configuration.assembly`: each entry names one policy of the
 * registry, and the policy reads its block exactly as the gateway's flow compiler will (schema,
 * version, defaults, the policy's own check), nested execute lists, catch blocks and finally
 * included, with every set of API property values a catalog may compile it with. Nothing is
 * fetched and nothing runs. The assembly's outer shape (`execute`, `catch`, `finally`) is checked
 * by the `x-ibm-configuration` schema. An API without an assembly gets the gateway's default one
 * (default-assembly.ts), checked the same way.
 */
import { possiblePropertyValues } from '../definitions/api-properties.ts';
import { appendPath, isRecord } from '../definitions/json-path.ts';
import { defaultAssembly } from './default-assembly.ts';
import { problemsInEveryCatalog } from './policy.ts';
import { policyRegistry } from './registry.ts';
import type { PolicyRegistry } from './registry.ts';
import { PolicyCompileError } from './types.ts';
import type { CheckScope, OperationKey, PolicyProblem } from './types.ts';

interface Walk {
  document: Record<string, unknown>;
  operations: readonly OperationKey[];
  propertySets: CheckScope['propertySets'];
  registry: PolicyRegistry;
}

/**
 * Problems of every policy in the assembly found at `path` (default `$.x-ibm-configuration.assembly`);
 * with no assembly (`undefined`), of the default one the gateway would run.
 */
export function assemblyProblems(
  assembly: Record<string, unknown> | undefined,
  document: Record<string, unknown>,
  operations: readonly OperationKey[],
  path = '$.x-ibm-configuration.assembly',
  registry: PolicyRegistry = policyRegistry,
): PolicyProblem[] {
  const walk: Walk = { document, operations, propertySets: possiblePropertyValues(document), registry };
  if (assembly === undefined) return defaultAssemblyProblems(walk, path);
  const problems = checkList(walk, assembly.execute, appendPath(path, 'execute'), []);
  if (Array.isArray(assembly.catch)) {
    assembly.catch.forEach((block, index) => {
      if (!isRecord(block)) return;
      const blockPath = appendPath(appendPath(path, 'catch'), index);
      problems.push(...checkList(walk, block.execute, appendPath(blockPath, 'execute'), []));
      problems.push(...checkList(walk, block.default, appendPath(blockPath, 'default'), []));
    });
  }
  problems.push(...checkList(walk, assembly.finally, appendPath(path, 'finally'), []));
  return problems;
}

/**
 * The default assembly exists per catalog (an invoke of the `target-url` property where it has a
 * value): refused when it fails in every catalog, at the property, since the document holds no
 * assembly to name.
 */
function defaultAssemblyProblems(walk: Walk, path: string): PolicyProblem[] {
  const problems = problemsInEveryCatalog(walk.propertySets, (properties) => {
    const { execute } = defaultAssembly(properties);
    const found = checkList({ ...walk, propertySets: [properties] }, execute, appendPath(path, 'execute'), []);
    if (found.length > 0) throw new PolicyCompileError(found[0].path, found[0].rule, found[0].reason);
  });
  return problems.map((problem) => ({
    path: '$.x-ibm-configuration.properties.target-url',
    rule: problem.rule,
    reason: `the API has no assembly, so the gateway calls the target-url property: ${problem.reason}`,
  }));
}

function checkList(walk: Walk, list: unknown, path: string, enclosing: readonly string[]): PolicyProblem[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry, index) => checkEntry(walk, entry, appendPath(path, index), enclosing));
}

function checkEntry(walk: Walk, entry: unknown, path: string, enclosing: readonly string[]): PolicyProblem[] {
  if (!isRecord(entry)) return []; // the enclosing schema reports the type
  const keys = Object.keys(entry);
  if (keys.length !== 1) {
    const found = keys.length === 0 ? 'none' : keys.join(', ');
    return [
      {
        path,
        rule: 'policy-shape',
        reason: `an assembly entry names exactly one policy (e.g. "- invoke: {...}"); found keys: ${found}`,
      },
    ];
  }
  const name = keys[0];
  const policyPath = appendPath(path, name);
  const type = walk.registry[name];
  if (type === undefined) {
    return [
      {
        path: policyPath,
        rule: 'unknown-policy',
        reason: `unknown policy ${name}; known policies: ${Object.keys(walk.registry).join(', ')}`,
      },
    ];
  }
  const inner = [...enclosing, name];
  return type.check(
    entry[name],
    {
      document: walk.document,
      operations: walk.operations,
      enclosing,
      propertySets: walk.propertySets,
      checkFlow: (entries, at) => checkList(walk, entries, at, inner),
    },
    policyPath,
  );
}
