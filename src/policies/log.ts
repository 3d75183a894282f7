/**
 * `log` (IBM "log", API Gateway): controls how the transaction is logged rather than writing
 * a log line itself. The step records the chosen mode and level on the context (`log.mode`,
 * `log.level`) for the activity-log writer to honour.
 */
import { contentLevels, oneOfStrings, policy } from './schema-kit.ts';
import { definePolicy } from './policy.ts';
import type { FlowContext, PolicyType, Step } from './types.ts';

export interface LogConfig {
  version?: string;
  title?: string;
  mode: 'gather-only' | 'send-only' | 'gather-and-send';
  'log-level': 'default' | 'none' | 'activity' | 'header' | 'payload';
}

/** The log policy. */
export const logPolicy: PolicyType = definePolicy<LogConfig>({
  name: 'log',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  description: 'Sets the analytics log level for this call or sends the gathered log.',
  schema: policy(['1.0.0', '2.0.0', '2.1.0'], {
    'log-level': oneOfStrings(
      ['default', ...contentLevels],
      'What is logged; default = the API activity-log setting.',
      'default',
    ),
    mode: oneOfStrings(
      ['gather-only', 'send-only', 'gather-and-send'],
      'Gather the log data, send it, or both.',
      'gather-and-send',
    ),
  }),
  // Both fields are defaulted and their values checked by the schema.
  compile(config: LogConfig): Step {
    const { mode, 'log-level': level } = config;
    return function logStep(ctx: FlowContext) {
      ctx.set('log.mode', mode);
      ctx.set('log.level', level);
    };
  },
});
