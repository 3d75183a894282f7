/**
 * The core assembly policies (everything but the gateway's invoke, proxy, ratelimit and
 * activity-log), keyed by their `x-ibm-configuration` name.
 */
import type { PolicyType } from './types.ts';
import { gatewayscriptPolicy } from './gatewayscript/index.ts';
import { ifPolicy } from './if.ts';
import { jwtGeneratePolicy } from './jwt-generate.ts';
import { jwtValidatePolicy } from './jwt-validate.ts';
import { logPolicy } from './log.ts';
import { mapPolicy } from './map/index.ts';
import { operationSwitchPolicy } from './operation-switch.ts';
import { parsePolicy } from './parse.ts';
import { setVariablePolicy } from './set-variable.ts';
import { switchPolicy } from './switch.ts';
import { throwPolicy } from './throw.ts';
import { validatePolicy } from './validate.ts';

const policies = [
  mapPolicy,
  gatewayscriptPolicy,
  operationSwitchPolicy,
  switchPolicy,
  ifPolicy,
  setVariablePolicy,
  throwPolicy,
  parsePolicy,
  validatePolicy,
  logPolicy,
  jwtValidatePolicy,
  jwtGeneratePolicy,
] as unknown as Array<PolicyType<never>>;

/** Core policy types by name, for the flow compiler's registry. */
export const corePolicies: Record<string, PolicyType<never>> = Object.freeze(Object.fromEntries(policies.map((policy) => [policy.name, policy])));
