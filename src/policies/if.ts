/**
 * `if` (IBM "if"): runs `execute` when `condition` holds. The condition language is the one of
 * `switch` (conditions.ts).
 */
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { compileCondition } from './conditions.ts';
import { optionalArray, policyMetaProperties, readBlock } from './policy-config.ts';

export interface IfConfig {
  version?: string;
  title?: string;
  condition: string;
  execute?: unknown[];
}

/** The if policy. */
export const ifPolicy: PolicyType<IfConfig> = {
  name: 'if',
  versions: ['1.0.0', '2.0.0'],
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['condition'],
    properties: {
      ...policyMetaProperties,
      condition: { type: 'string', description: 'JSONata (API Gateway) or a v5 JavaScript condition.' },
      execute: { type: 'array', default: [], description: 'Policies run when the condition holds.' },
    },
  },
  compile(config: IfConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, ifPolicy, path);
    const condition = compileCondition(block.condition, `${path}.condition`);
    const execute = api.compileFlow(optionalArray(block, 'execute', path), `${path}.execute`);
    return async function ifStep(ctx: FlowContext) {
      if (await condition(ctx)) await execute(ctx);
    };
  },
};
