/**
 * `operation-switch` (IBM "operation-switch"): runs the `execute` list of the first case whose
 * `operations` name the operation the router matched, else `otherwise`. An operation is an
 * `operationId` or a `{verb, path}` pair; verbs compare case-insensitively, paths exactly as
 * written in the OpenAPI document.
 */
import { executeList, policy, str } from './schema-kit.ts';
import type { CheckScope, JSONSchema, OperationKey, PolicyProblem } from './types.ts';
import { definePolicy } from './policy.ts';
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalArray, readBlock } from './policy-config.ts';

export interface OperationSwitchConfig {
  version?: string;
  title?: string;
  case?: Array<{ operations: Array<string | { verb: string; path: string }>; execute: unknown[] }>;
  otherwise?: unknown[];
}

function operationKey(verb: string, path: string): string {
  return `${verb.toUpperCase()} ${path}`;
}

// IBM "operation-switch": "cannot be nested inside if, switch or another operation-switch".
const branchingPolicies = new Set(['if', 'switch', 'operation-switch']);

const operationReference: JSONSchema = {
  type: ['string', 'object'],
  description: 'An operationId, or {verb, path} of an operation.',
  additionalProperties: false,
  required: ['verb', 'path'],
  properties: {
    verb: str('HTTP method of the operation.'),
    path: str('Path template of the operation, e.g. /stores.'),
  },
};

/** The operation-switch policy. */
export const operationSwitchPolicy: PolicyType = definePolicy<OperationSwitchConfig>({
  name: 'operation-switch',
  versions: ['1.0.0', '2.0.0'],
  description: 'Runs the case whose operations include the called operation; otherwise runs otherwise.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    {
      case: {
        type: 'array',
        default: [],
        description: 'Cases, each naming operations by operationId or {verb, path}.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['operations', 'execute'],
          properties: {
            operations: {
              type: 'array',
              description: 'Operations this case handles.',
              items: operationReference,
            },
            execute: executeList,
          },
        },
      },
      otherwise: { ...executeList, description: 'Policies run when no case names the operation.' },
    },
    ['case'],
  ),
  check(config: OperationSwitchConfig, scope: CheckScope, path: string) {
    const problems: PolicyProblem[] = [];
    const outer = scope.enclosing.filter((name) => branchingPolicies.has(name));
    if (outer.length > 0) {
      problems.push({
        path,
        rule: 'invalid-nesting',
        reason: `operation-switch cannot be nested inside ${outer.join(', ')}`,
      });
    }
    (config.case ?? []).forEach((item, index) => {
      const at = `${path}.case[${index}]`;
      problems.push(...unknownOperations(item.operations, scope.operations, `${at}.operations`));
      problems.push(...scope.checkFlow(item.execute, `${at}.execute`));
    });
    problems.push(...scope.checkFlow(config.otherwise, `${path}.otherwise`));
    return problems;
  },
  compile(config: OperationSwitchConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, operationSwitchPolicy, path);
    const byOperation = new Map<string, number>();
    const branches: Step[] = optionalArray(block, 'case', path).map((entry, index) => {
      const at = `${path}.case[${index}]`;
      const caseBlock = entry as Record<string, unknown>;
      if (
        typeof entry !== 'object' ||
        entry === null ||
        !Array.isArray(caseBlock.operations) ||
        !Array.isArray(caseBlock.execute)
      ) {
        throw new PolicyCompileError(at, 'operation-case', 'a case needs an `operations` list and an `execute` list');
      }
      caseBlock.operations.forEach((operation, opIndex) => {
        const key = keyOf(operation, `${at}.operations[${opIndex}]`);
        if (!byOperation.has(key)) byOperation.set(key, index);
      });
      return api.compileFlow(caseBlock.execute, `${at}.execute`);
    });
    const otherwise = api.compileFlow(optionalArray(block, 'otherwise', path), `${path}.otherwise`);
    return function operationSwitchStep(ctx: FlowContext) {
      const { id, verb, path: operationPath } = ctx.operation;
      const byId = id === undefined ? undefined : byOperation.get(`id ${id}`);
      const byRoute = byOperation.get(operationKey(verb, operationPath));
      const index = byId === undefined ? byRoute : byRoute === undefined ? byId : Math.min(byId, byRoute);
      return index === undefined ? otherwise(ctx) : branches[index](ctx);
    };
  },
});

function keyOf(operation: unknown, path: string): string {
  if (typeof operation === 'string' && operation !== '') return `id ${operation}`;
  if (typeof operation === 'object' && operation !== null) {
    const { verb, path: opPath } = operation as Record<string, unknown>;
    if (typeof verb === 'string' && typeof opPath === 'string') return operationKey(verb, opPath);
  }
  throw new PolicyCompileError(path, 'operation', 'an operation is an operationId string or a {verb, path} object');
}

function unknownOperations(references: unknown[], operations: readonly OperationKey[], path: string): PolicyProblem[] {
  return references.flatMap((reference, index) => {
    if (findOperation(operations, reference) !== false) return [];
    const reason = `${operationLabel(reference)} is not an operation of this API (${knownOperations(operations)})`;
    return [{ path: `${path}[${index}]`, rule: 'unknown-operation', reason }];
  });
}

// undefined = the reference is malformed (the schema reports it); false = no such operation.
function findOperation(operations: readonly OperationKey[], reference: unknown): boolean | undefined {
  if (typeof reference === 'string') return operations.some((operation) => operation.id === reference);
  if (typeof reference === 'object' && reference !== null) {
    const { verb, path } = reference as Record<string, unknown>;
    if (typeof verb !== 'string' || typeof path !== 'string') return undefined;
    return operations.some((operation) => operation.verb === verb.toLowerCase() && operation.path === path);
  }
  return undefined;
}

function operationLabel(reference: unknown): string {
  if (typeof reference === 'string') return `operation ${reference}`;
  const { verb, path } = reference as { verb: string; path: string };
  return `operation ${verb.toUpperCase()} ${path}`;
}

function knownOperations(operations: readonly OperationKey[]): string {
  if (operations.length === 0) return 'it has none';
  return (
    'known: ' +
    operations.map((operation) => operation.id ?? `${operation.verb.toUpperCase()} ${operation.path}`).join(', ')
  );
}
