/**
 * The gateway's policy registry: the core policies plus the ones that need the gateway's own
 * resources (invoke/proxy use its connection pools; user-security the catalog's compiled user
 * registries; the v5 `activity-log` assembly policy is accepted and its setting taken from
 * x-ibm-configuration), and the XML conversions
 * (xml-to-json, json-to-xml) on the safe XML parser of src/soap.
 */
import { invokePolicy, proxyPolicy } from '../policies/invoke.ts';
import { declaredPolicy } from '../policies/policy-config.ts';
import { ratelimitPolicy } from '../policies/ratelimit.ts';
import { jsonToXmlPolicy } from '../policies/json-to-xml.ts';
import { xmlToJsonPolicy } from '../policies/xml-to-json.ts';
import { corePolicies } from '../policies/registry.ts';
import { userSecurityPolicy } from '../policies/user-security.ts';
import type { PolicyType } from '../policies/types.ts';
import type { PolicyRegistry } from './flow.ts';

/** v5's assembly-level activity-log: the gateway records activity from the API setting, so the step does nothing. */
const activityLogPolicy: PolicyType<Record<string, unknown>> = {
  name: 'activity-log',
  ...declaredPolicy('activity-log'),
  compile: () =>
    function activityLog() {
      // Recording happens once per call in the gateway (gateway/activity.ts).
    },
};

export function createPolicyRegistry(): PolicyRegistry {
  return Object.freeze({
    ...corePolicies,
    invoke: invokePolicy as unknown as PolicyType<never>,
    proxy: proxyPolicy as unknown as PolicyType<never>,
    'activity-log': activityLogPolicy as unknown as PolicyType<never>,
    ratelimit: ratelimitPolicy as unknown as PolicyType<never>,
    'xml-to-json': xmlToJsonPolicy as unknown as PolicyType<never>,
    'json-to-xml': jsonToXmlPolicy as unknown as PolicyType<never>,
    'user-security': userSecurityPolicy as unknown as PolicyType<never>,
  });
}
