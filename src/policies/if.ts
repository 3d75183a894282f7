/**
 * `if` (IBM "if"): runs `execute` when `condition` holds. The condition language is the one of
 * `switch` (conditions.ts).
 */
import { declaredPolicy } from './policy-config.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { compileCondition } from './conditions.ts';
import { optionalArray, readBlock } from './policy-config.ts';

export interface IfConfig {
  version?: string;
  title?: string;
  condition: string;
  execute?: unknown[];
}

/** The if policy. */
export const ifPolicy: PolicyType<IfConfig> = {
  name: 'if',
  ...declaredPolicy('if'),
  compile(config: IfConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, ifPolicy, path);
    const condition = compileCondition(block.condition, `${path}.condition`);
    const execute = api.compileFlow(optionalArray(block, 'execute', path), `${path}.execute`);
    return async function ifStep(ctx: FlowContext) {
      if (await condition(ctx)) await execute(ctx);
    };
  },
};
