import assert from 'node:assert/strict';
import { test } from 'node:test';
import { policySchemas } from '../../src/definitions/policy-schemas.ts';
import { createPolicyRegistry } from '../../src/gateway/policies.ts';

test('every policy the gateway runs is the one import validates: same versions, same schema', () => {
  const registry = createPolicyRegistry();
  assert.deepEqual(Object.keys(registry).sort(), Object.keys(policySchemas).sort());
  for (const [name, policy] of Object.entries(registry)) {
    assert.deepEqual(policy.versions, policySchemas[name].versions, name);
    assert.equal(policy.schema, policySchemas[name].schema, name);
  }
});
