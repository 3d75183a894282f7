/**
 * `switch` (IBM "switch"): runs the `execute` list of the first case whose `condition` holds,
 * else the `otherwise` case. Conditions are JSONata with API Connect's extensions, or simple
 * v5 JavaScript conditions (see conditions.ts).
 */
import { declaredPolicy } from './policy-config.ts';
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { compileCondition } from './conditions.ts';
import type { Condition } from './conditions.ts';
import { optionalArray, readBlock } from './policy-config.ts';

export interface SwitchConfig {
  version?: string;
  title?: string;
  case?: Array<{ condition: string; execute: unknown[] } | { otherwise: unknown[] }>;
  otherwise?: unknown[];
}

interface Branch {
  condition: Condition;
  step: Step;
}

/** The switch policy. */
export const switchPolicy: PolicyType<SwitchConfig> = {
  name: 'switch',
  ...declaredPolicy('switch'),
  compile(config: SwitchConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, switchPolicy, path);
    const branches: Branch[] = [];
    let otherwise: Step | undefined;
    optionalArray(block, 'case', path).forEach((entry, index) => {
      const at = `${path}.case[${index}]`;
      if (typeof entry !== 'object' || entry === null) throw new PolicyCompileError(at, 'switch-case', 'a case must be an object');
      const caseBlock = entry as Record<string, unknown>;
      if (Array.isArray(caseBlock.otherwise)) {
        if (otherwise !== undefined) throw new PolicyCompileError(at, 'switch-case', 'only one otherwise case is allowed');
        otherwise = api.compileFlow(caseBlock.otherwise, `${at}.otherwise`);
        return;
      }
      if (!Array.isArray(caseBlock.execute)) throw new PolicyCompileError(`${at}.execute`, 'required', 'a case needs a `condition` and an `execute` list');
      branches.push({ condition: compileCondition(caseBlock.condition, `${at}.condition`), step: api.compileFlow(caseBlock.execute, `${at}.execute`) });
    });
    if (Array.isArray(block.otherwise)) {
      if (otherwise !== undefined) throw new PolicyCompileError(`${path}.otherwise`, 'switch-case', 'only one otherwise case is allowed');
      otherwise = api.compileFlow(block.otherwise, `${path}.otherwise`);
    }
    const fallback = otherwise;
    return async function switchStep(ctx: FlowContext) {
      for (const branch of branches) {
        if (await branch.condition(ctx)) return branch.step(ctx);
      }
      if (fallback !== undefined) return fallback(ctx);
    };
  },
};
