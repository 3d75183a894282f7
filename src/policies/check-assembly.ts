/**
 * The import-time check of an `x-ibm-configuration.assembly`: each entry names one policy of the
 * registry, and the policy reads its block exactly as the gateway's flow compiler will (schema,
 * version, defaults, the policy's own check), nested execute lists, catch blocks and finally
 * included. Nothing expensive is compiled and nothing is fetched. The assembly's outer shape
 * (`execute`, `catch`, `finally`) is checked by the `x-ibm-configuration` schema.
 */
import { appendPath, isRecord } from '../definitions/json-path.ts';
import { policyRegistry } from './registry.ts';
import type { PolicyRegistry } from './registry.ts';
import type { OperationKey, PolicyProblem } from './types.ts';

interface Walk {
  document: Record<string, unknown>;
  operations: readonly OperationKey[];
  registry: PolicyRegistry;
}

/** Problems of every policy in the assembly found at `path` (default `$.x-ibm-configuration.assembly`). */
export function assemblyProblems(
  assembly: Record<string, unknown>,
  document: Record<string, unknown>,
  operations: readonly OperationKey[],
  path = '$.x-ibm-configuration.assembly',
  registry: PolicyRegistry = policyRegistry,
): PolicyProblem[] {
  const walk: Walk = { document, operations, registry };
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
      checkFlow: (entries, at) => checkList(walk, entries, at, inner),
    },
    policyPath,
  );
}
