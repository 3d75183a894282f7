import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { policyRegistry } from '../../src/policies/registry.ts';

const expectedPolicies = [
  'invoke',
  'proxy',
  'map',
  'gatewayscript',
  'operation-switch',
  'switch',
  'if',
  'set-variable',
  'throw',
  'parse',
  'validate',
  'xml-to-json',
  'json-to-xml',
  'ratelimit',
  'activity-log',
  'log',
  'jwt-validate',
  'jwt-generate',
  'user-security',
  'redact',
];

type Schema = Record<string, unknown>;

function topProperties(schema: Schema): Record<string, Schema> {
  return schema.properties as Record<string, Schema>;
}

describe('policy schemas', () => {
  it('has one schema per assembly policy type', () => {
    assert.deepEqual(Object.keys(policyRegistry).sort(), [...expectedPolicies].sort());
  });

  for (const [name, entry] of Object.entries(policyRegistry)) {
    it(`${name}: every field has a type and a description, and unknown fields are refused`, () => {
      assert.equal(entry.schema.additionalProperties, false);
      for (const [field, schema] of Object.entries(topProperties(entry.schema))) {
        assert.ok(schema.type !== undefined || schema.enum !== undefined, `${name}.${field} has no type`);
        assert.equal(typeof schema.description, 'string', `${name}.${field} has no description`);
      }
      assert.ok(entry.description.length > 0);
    });

    it(`${name}: version defaults to its first accepted version and the schema compiles`, () => {
      assert.equal(topProperties(entry.schema).version.default, entry.versions[0]);
      assert.doesNotThrow(() => new Ajv({ strict: false }).compile(entry.schema));
    });
  }

  it('invoke carries API Connect defaults: timeout 60, verb keep, cache-ttl 900, persistent connections', () => {
    const invoke = topProperties(policyRegistry.invoke.schema);
    assert.deepEqual(
      [
        'timeout',
        'verb',
        'cache-ttl',
        'cache-response',
        'persistent-connection',
        'chunked-uploads',
        'backend-type',
      ].map((field) => invoke[field].default),
      [60, 'keep', 900, 'protocol', true, true, 'detect'],
    );
    assert.deepEqual(invoke['header-control'].default, { type: 'blocklist', values: [] });
    assert.deepEqual(invoke['parameter-control'].default, { type: 'allowlist', values: [] });
  });

  it('invoke accepts the v5 stop-on-error [null] and refuses a number in it', () => {
    const validate = new Ajv({ strict: false }).compile(policyRegistry.invoke.schema);
    assert.equal(validate({ 'target-url': 'http://a', 'stop-on-error': [null] }), true);
    assert.equal(validate({ 'target-url': 'http://a', 'stop-on-error': [1] }), false);
  });

  it('map validates nested foreach actions recursively', () => {
    const validate = new Ajv({ strict: false }).compile(policyRegistry.map.schema);
    assert.equal(
      validate({ actions: [{ create: 'out', foreach: 'in', actions: [{ set: 'a', from: ['x', 'y'] }] }] }),
      true,
    );
    assert.equal(validate({ actions: [{ create: 'out', foreach: 'in', actions: [{ from: 'x' }] }] }), false);
  });
});
