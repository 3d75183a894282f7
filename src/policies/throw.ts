/**
 * `throw` (IBM "throw"): raises a named error that the assembly's `catch` matches by name.
 * "If no catch is triggered by the thrown error, then a 500 Internal Server Error is returned";
 * throw 2.1.0 adds `error-status-code` and `error-status-reason` for the uncaught response.
 */
import { policy, str } from './schema-kit.ts';
import { definePolicy, problemsOf } from './policy.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, PolicyType, Step } from './types.ts';
import { optionalString, readBlock, requireString, titleOf } from './policy-config.ts';
import type { PolicyBlock } from './policy-config.ts';

export interface ThrowConfig {
  version?: string;
  title?: string;
  name: string;
  message: string;
  'error-status-code': number | string;
  'error-status-reason'?: string;
}

/** The throw policy. */
export const throwPolicy: PolicyType = definePolicy<ThrowConfig>({
  name: 'throw',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  description: 'Raises a named error, handled by a matching catch or returned as 500.',
  schema: policy(
    ['1.0.0', '2.0.0', '2.1.0'],
    {
      name: str('Error name matched by catch blocks.'),
      message: str('Error message returned as moreInformation.', ''),
      'error-status-code': {
        type: ['string', 'integer'],
        default: '500',
        description: 'HTTP status returned for the error (2.1.0).',
      },
      'error-status-reason': str('HTTP reason phrase returned for the error (2.1.0).'),
    },
    ['name'],
  ),
  check: (config: ThrowConfig, _scope: CheckScope, path: string) => [
    ...problemsOf(() => nameOf(readBlock(config, throwPolicy, path), path)),
    ...problemsOf(() => statusOf(config['error-status-code'], `${path}.error-status-code`)),
  ],
  compile(config: ThrowConfig, _api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, throwPolicy, path);
    const name = nameOf(block, path);
    const { message } = config;
    const status = statusOf(block['error-status-code'], `${path}.error-status-code`);
    const reason = optionalString(block, 'error-status-reason', path) ?? '';
    const title = titleOf(block, 'throw');
    return function throwStep() {
      throw new AssemblyError(name, message, { status, reason, policy: title });
    };
  },
});

/** The error name catch blocks match: a non-empty string (a number as YAML writes `name: 404`). */
function nameOf(block: PolicyBlock, path: string): string {
  return typeof block.name === 'number' ? String(block.name) : requireString(block, 'name', path);
}

function statusOf(value: unknown, path: string): number {
  if (value === undefined || value === null || value === '') return 500;
  const status = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(status) || status < 100 || status > 599) {
    throw new PolicyCompileError(path, 'status-code', 'error-status-code must be an HTTP status between 100 and 599');
  }
  return status;
}
