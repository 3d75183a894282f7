import assert from 'node:assert/strict';
import { test } from 'node:test';
import { policyRegistry } from '../../src/policies/registry.ts';

test('one registry: each policy is registered under its own name, frozen', () => {
  for (const [name, policy] of Object.entries(policyRegistry)) assert.equal(policy.name, name);
  assert.ok(Object.isFrozen(policyRegistry));
  // A null prototype: an assembly entry named after an Object.prototype member is an unknown policy.
  assert.equal(policyRegistry['constructor'], undefined);
});
