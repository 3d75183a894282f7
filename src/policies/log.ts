/**
 * `log` (IBM "log", API Gateway): controls how the transaction is logged rather than writing
 * a log line itself. The step records the chosen mode and level on the context (`log.mode`,
 * `log.level`) for the activity-log writer to honour.
 */
import { contentLevels, oneOfStrings, policy } from './schema-kit.ts';
import { definePolicy } from './policy.ts';
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { readBlock } from './policy-config.ts';

export interface LogConfig {
  version?: string;
  title?: string;
  mode?: 'gather-only' | 'send-only' | 'gather-and-send';
  'log-level'?: 'default' | 'none' | 'activity' | 'header' | 'payload';
}

const modes = ['gather-only', 'send-only', 'gather-and-send'];
const levels = ['default', 'none', 'activity', 'header', 'payload'];

/** The log policy. */
export const logPolicy: PolicyType = definePolicy<LogConfig>({
  name: 'log',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  description: 'Sets the analytics log level for this call or sends the gathered log.',
  schema: policy(['1.0.0', '2.0.0', '2.1.0'], {
    'log-level': oneOfStrings(['default', ...contentLevels], 'What is logged; default = the API activity-log setting.', 'default'),
    mode: oneOfStrings(['gather-only', 'send-only', 'gather-and-send'], 'Gather the log data, send it, or both.', 'gather-and-send'),
  }),
  compile(config: LogConfig, _api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, logPolicy, path);
    const mode = String(block.mode ?? 'gather-and-send');
    const level = String(block['log-level'] ?? 'default');
    if (!modes.includes(mode)) throw new PolicyCompileError(`${path}.mode`, 'enum', `mode must be one of ${modes.join(', ')}`);
    if (!levels.includes(level)) throw new PolicyCompileError(`${path}.log-level`, 'enum', `log-level must be one of ${levels.join(', ')}`);
    return function logStep(ctx: FlowContext) {
      ctx.set('log.mode', mode);
      ctx.set('log.level', level);
    };
  },
});
