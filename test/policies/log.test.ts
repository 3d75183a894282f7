import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { corePolicies } from '../../src/policies/registry.ts';
import { compile, makeContext } from './helpers.ts';

describe('log policy', () => {
  it('records the log mode and level on the context', async () => {
    const ctx = makeContext();
    await compile({ execute: [{ log: { version: '2.0.0', mode: 'gather-only', 'log-level': 'payload' } }] })(ctx);
    assert.deepEqual([ctx.get('log.mode'), ctx.get('log.level')], ['gather-only', 'payload']);
  });

  it('refuses an unknown mode', () => {
    assert.throws(() => compile({ execute: [{ log: { mode: 'shout' } }] }), (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.log.mode'));
  });
});

describe('core policy registry', () => {
  it('lists each core policy under its x-ibm-configuration name with a schema', () => {
    assert.deepEqual(Object.keys(corePolicies).sort(), ['gatewayscript', 'if', 'jwt-generate', 'jwt-validate', 'log', 'map', 'operation-switch', 'parse', 'set-variable', 'switch', 'throw', 'validate']);
    for (const [name, policy] of Object.entries(corePolicies)) {
      assert.equal(policy.name, name);
      assert.equal((policy.schema as { type?: string }).type, 'object');
      assert.ok(policy.versions.includes('2.0.0'), `${name} accepts 2.0.0`);
    }
  });
});
