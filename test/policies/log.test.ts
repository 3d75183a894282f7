import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compile, makeContext } from './helpers.ts';

describe('log policy', () => {
  it('records the log mode and level on the context', async () => {
    const ctx = makeContext();
    await compile({ execute: [{ log: { version: '2.0.0', mode: 'gather-only', 'log-level': 'payload' } }] })(ctx);
    assert.deepEqual([ctx.get('log.mode'), ctx.get('log.level')], ['gather-only', 'payload']);
  });

  it('refuses an unknown mode', () => {
    assert.throws(
      () => compile({ execute: [{ log: { mode: 'shout' } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.log.mode'),
    );
  });
});

describe('policy registry', () => {
  it('lists each policy under its x-ibm-configuration name with a schema', () => {
    assert.deepEqual(Object.keys(policyRegistry).sort(), [
      'activity-log',
      'gatewayscript',
      'if',
      'invoke',
      'json-to-xml',
      'jwt-generate',
      'jwt-validate',
      'log',
      'map',
      'operation-switch',
      'parse',
      'proxy',
      'ratelimit',
      'redact',
      'set-variable',
      'switch',
      'throw',
      'user-security',
      'validate',
      'xml-to-json',
    ]);
    for (const [name, policy] of Object.entries(policyRegistry)) {
      assert.equal(policy.name, name);
      assert.equal((policy.schema as { type?: string }).type, 'object');
      assert.ok(policy.versions.length > 0, `${name} accepts a version`);
    }
  });
});
