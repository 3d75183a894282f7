/**
 * `if` (IBM "if"): runs `execute` when `condition` holds. The condition language is the one of
 * `switch` (conditions.ts).
 */
import { executeList, policy, str } from './schema-kit.ts';
import { definePolicy, problemsOf } from './policy.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { compileCondition } from './conditions.ts';
import { optionalArray, readBlock } from './policy-config.ts';

export interface IfConfig {
  version?: string;
  title?: string;
  condition: string;
  execute?: unknown[];
}

/** The if policy. */
export const ifPolicy: PolicyType = definePolicy<IfConfig>({
  name: 'if',
  versions: ['1.0.0', '2.0.0'],
  description: 'Runs execute when condition holds.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    { condition: str('Condition (JSONata on API Gateway, JavaScript on v5).'), execute: executeList },
    ['condition', 'execute'],
  ),
  check(config: IfConfig, scope: CheckScope, path: string) {
    return [
      ...problemsOf(() => compileCondition(config.condition, `${path}.condition`)),
      ...scope.checkFlow(config.execute, `${path}.execute`),
    ];
  },
  compile(config: IfConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, ifPolicy, path);
    const condition = compileCondition(block.condition, `${path}.condition`);
    const execute = api.compileFlow(optionalArray(block, 'execute', path), `${path}.execute`);
    return async function ifStep(ctx: FlowContext) {
      if (await condition(ctx)) await execute(ctx);
    };
  },
});
