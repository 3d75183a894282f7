/**
 * `switch` (IBM "switch"): runs the `execute` list of the first case whose `condition` holds,
 * else the `otherwise` case. Conditions are JSONata with API Connect's extensions, or simple
 * v5 JavaScript conditions (see conditions.ts).
 */
import { executeList, policy, str } from './schema-kit.ts';
import type { CheckScope, JSONSchema, PolicyProblem } from './types.ts';
import { definePolicy, problemsOf } from './policy.ts';
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

const conditionCase: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  anyOf: [{ required: ['condition', 'execute'] }, { required: ['otherwise'] }],
  properties: {
    condition: str('Condition (JSONata on API Gateway 2.x, JavaScript on v5 1.0.0); the first true case runs.'),
    // No defaults: which of the two a case has is what makes it a condition case or the otherwise case.
    execute: { ...executeList, default: undefined },
    otherwise: { ...executeList, default: undefined, description: 'Policies run when no case matched.' },
  },
};

/** The switch policy. */
export const switchPolicy: PolicyType = definePolicy<SwitchConfig>({
  name: 'switch',
  versions: ['1.0.0', '2.0.0'],
  description: 'Runs the first case whose condition holds, else the otherwise entry.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    {
      case: {
        type: 'array',
        default: [],
        description: 'Condition cases and one optional {otherwise} entry.',
        items: conditionCase,
      },
    },
    ['case'],
  ),
  check(config: SwitchConfig, scope: CheckScope, path: string) {
    const problems: PolicyProblem[] = [];
    let otherwiseCases = 0;
    (config.case ?? []).forEach((entry, index) => {
      const at = `${path}.case[${index}]`;
      if ('otherwise' in entry && Array.isArray(entry.otherwise)) {
        if (++otherwiseCases > 1)
          problems.push({ path: at, rule: 'switch-case', reason: 'only one otherwise case is allowed' });
        problems.push(...scope.checkFlow(entry.otherwise, `${at}.otherwise`));
        return;
      }
      if (!('condition' in entry)) return; // the schema reports it
      problems.push(...problemsOf(() => compileCondition(entry.condition, `${at}.condition`)));
      problems.push(...scope.checkFlow(entry.execute, `${at}.execute`));
    });
    return problems;
  },
  compile(config: SwitchConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, switchPolicy, path);
    const branches: Branch[] = [];
    let otherwise: Step | undefined;
    optionalArray(block, 'case', path).forEach((entry, index) => {
      const at = `${path}.case[${index}]`;
      if (typeof entry !== 'object' || entry === null)
        throw new PolicyCompileError(at, 'switch-case', 'a case must be an object');
      const caseBlock = entry as Record<string, unknown>;
      if (Array.isArray(caseBlock.otherwise)) {
        if (otherwise !== undefined)
          throw new PolicyCompileError(at, 'switch-case', 'only one otherwise case is allowed');
        otherwise = api.compileFlow(caseBlock.otherwise, `${at}.otherwise`);
        return;
      }
      if (!Array.isArray(caseBlock.execute))
        throw new PolicyCompileError(`${at}.execute`, 'required', 'a case needs a `condition` and an `execute` list');
      branches.push({
        condition: compileCondition(caseBlock.condition, `${at}.condition`),
        step: api.compileFlow(caseBlock.execute, `${at}.execute`),
      });
    });
    if (Array.isArray(block.otherwise)) {
      if (otherwise !== undefined)
        throw new PolicyCompileError(`${path}.otherwise`, 'switch-case', 'only one otherwise case is allowed');
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
});
