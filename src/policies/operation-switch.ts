/**
 * `operation-switch` (IBM "operation-switch"): runs the `execute` list of the first case whose
 * `operations` name the operation the router matched, else `otherwise`. An operation is an
 * `operationId` or a `{verb, path}` pair; verbs compare case-insensitively, paths exactly as
 * written in the OpenAPI document.
 */
import { declaredPolicy } from './policy-config.ts';
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
const nestingMarkers = ['.operation-switch.', '.switch.', '.if.'];

/** The operation-switch policy. */
export const operationSwitchPolicy: PolicyType<OperationSwitchConfig> = {
  name: 'operation-switch',
  ...declaredPolicy('operation-switch'),
  compile(config: OperationSwitchConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, operationSwitchPolicy, path);
    if (nestingMarkers.some((marker) => path.includes(marker))) {
      throw new PolicyCompileError(path, 'nested-operation-switch', 'operation-switch cannot be nested inside if, switch or another operation-switch');
    }
    const byOperation = new Map<string, number>();
    const branches: Step[] = optionalArray(block, 'case', path).map((entry, index) => {
      const at = `${path}.case[${index}]`;
      const caseBlock = entry as Record<string, unknown>;
      if (typeof entry !== 'object' || entry === null || !Array.isArray(caseBlock.operations) || !Array.isArray(caseBlock.execute)) {
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
};

function keyOf(operation: unknown, path: string): string {
  if (typeof operation === 'string' && operation !== '') return `id ${operation}`;
  if (typeof operation === 'object' && operation !== null) {
    const { verb, path: opPath } = operation as Record<string, unknown>;
    if (typeof verb === 'string' && typeof opPath === 'string') return operationKey(verb, opPath);
  }
  throw new PolicyCompileError(path, 'operation', 'an operation is an operationId string or a {verb, path} object');
}
