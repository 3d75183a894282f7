/**
 * The one policy registry: every assembly policy Portico runs, keyed by its
 * `x-ibm-configuration` name. The import check (check-assembly.ts) and the gateway's flow
 * compiler (gateway/flow.ts) both read blocks through it, so they cannot disagree. Adding a
 * policy: its module in this folder, one line here (docs/architecture.md, "Policies").
 */
import { activityLogPolicy } from './activity-log.ts';
import { gatewayscriptPolicy } from './gatewayscript/index.ts';
import { ifPolicy } from './if.ts';
import { invokePolicy, proxyPolicy } from './invoke/index.ts';
import { jsonToXmlPolicy } from './json-to-xml.ts';
import { jwtGeneratePolicy } from './jwt-generate.ts';
import { jwtValidatePolicy } from './jwt-validate.ts';
import { logPolicy } from './log.ts';
import { mapPolicy } from './map/index.ts';
import { operationSwitchPolicy } from './operation-switch.ts';
import { parsePolicy } from './parse.ts';
import { ratelimitPolicy } from './ratelimit.ts';
import { redactPolicy } from './redact/index.ts';
import { setVariablePolicy } from './set-variable.ts';
import { switchPolicy } from './switch.ts';
import { throwPolicy } from './throw.ts';
import { userSecurityPolicy } from './user-security/index.ts';
import { validatePolicy } from './validate.ts';
import { xmlToJsonPolicy } from './xml-to-json.ts';
import type { PolicyType } from './types.ts';

/** Policy types by name. */
export type PolicyRegistry = Readonly<Record<string, PolicyType>>;

const policies: readonly PolicyType[] = [
  invokePolicy,
  proxyPolicy,
  mapPolicy,
  gatewayscriptPolicy,
  operationSwitchPolicy,
  switchPolicy,
  ifPolicy,
  setVariablePolicy,
  jwtValidatePolicy,
  jwtGeneratePolicy,
  throwPolicy,
  parsePolicy,
  validatePolicy,
  xmlToJsonPolicy,
  jsonToXmlPolicy,
  ratelimitPolicy,
  userSecurityPolicy,
  activityLogPolicy,
  logPolicy,
  redactPolicy,
];

/** Every policy, by name (frozen; null prototype, so a block named `constructor` is unknown). */
export const policyRegistry: PolicyRegistry = Object.freeze(
  Object.assign(
    Object.create(null) as Record<string, PolicyType>,
    Object.fromEntries(policies.map((p) => [p.name, p])),
  ),
);
