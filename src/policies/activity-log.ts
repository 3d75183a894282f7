/**
 * `activity-log` (v5 assembly form): the gateway records activity once per call from the API's
 * `activity-log` setting (gateway/activity.ts), so the step itself does nothing; the block is
 * accepted so v5 documents run as written.
 */
import { definePolicy } from './policy.ts';
import { contentLevels, oneOfStrings, policy } from './schema-kit.ts';
import type { PolicyType } from './types.ts';

export interface ActivityLogConfig {
  version?: string;
  title?: string;
  content: string;
  'error-content': string;
}

export const activityLogPolicy: PolicyType = definePolicy<ActivityLogConfig>({
  name: 'activity-log',
  versions: ['1.0.0'],
  description: 'v5 assembly form of the activity log settings: what analytics records per call.',
  schema: policy(['1.0.0'], {
    content: oneOfStrings(contentLevels, 'What is logged for a successful call.', 'activity'),
    'error-content': oneOfStrings(contentLevels, 'What is logged for a failed call.', 'payload'),
  }),
  compile: () =>
    function activityLog() {
      // Recording happens once per call in the gateway (gateway/activity.ts).
    },
});
