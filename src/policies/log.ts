/**
 * `log` (IBM "log", API Gateway): controls how the transaction is logged rather than writing
 * a log line itself. The step records the chosen mode and level on the context (`log.mode`,
 * `log.level`) for the activity-log writer to honour.
 */
import { PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { policyMetaProperties, readBlock } from './policy-config.ts';

export interface LogConfig {
  version?: string;
  title?: string;
  mode?: 'gather-only' | 'send-only' | 'gather-and-send';
  'log-level'?: 'default' | 'none' | 'activity' | 'header' | 'payload';
}

const modes = ['gather-only', 'send-only', 'gather-and-send'];
const levels = ['default', 'none', 'activity', 'header', 'payload'];

/** The log policy. */
export const logPolicy: PolicyType<LogConfig> = {
  name: 'log',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...policyMetaProperties,
      mode: { enum: modes, default: 'gather-and-send', description: 'Gather the log data, send it, or both.' },
      'log-level': { enum: levels, default: 'default', description: 'How much is logged; `default` keeps the API setting.' },
    },
  },
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
};
