import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { compileParameter, readParameters } from '../../../src/gateway/parameters.ts';

const header = (name: string, required: boolean) =>
  compileParameter({ name, in: 'header', required, schema: { type: 'string' } });

test('a required header named like an Object.prototype member is missing when the request lacks it', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assert.throws(
      () => readParameters([header(name, true)], {}, undefined, {}),
      (error: unknown) => error instanceof PorticoError && error.code === 'GW_MISSING_PARAMETER',
      name,
    );
  }
});

test('a parameter named __proto__ is a value, not the prototype of the values', () => {
  const values = readParameters(
    [compileParameter({ name: '__proto__', in: 'query', required: false, schema: { type: 'string' } })],
    {},
    new URLSearchParams('__proto__=x'),
    {},
  );
  assert.equal(Object.getPrototypeOf(values), null);
  assert.deepEqual(Object.keys(values), ['__proto__']);
  assert.equal(values['__proto__'], 'x');
});

test('headers and path parameters are read as before', () => {
  const values = readParameters(
    [
      header('X-Trace', true),
      compileParameter({ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }),
    ],
    { 'x-trace': 'abc' },
    undefined,
    { id: '42' },
  );
  assert.deepEqual({ ...values }, { 'X-Trace': 'abc', id: 42 });
});
