import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importKeySet, keyAlgorithms } from '../../../src/policies/jose/key-set.ts';

test('a key type or curve naming an Object.prototype member allows no algorithm', () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    assert.deepEqual(keyAlgorithms({ kty: name }), [], `kty ${name}`);
    assert.deepEqual(keyAlgorithms({ kty: name, alg: 'RS256' }), [], `kty ${name} with alg`);
    assert.deepEqual(keyAlgorithms({ kty: 'EC', crv: name }), [], `crv ${name}`);
  }
  assert.deepEqual(keyAlgorithms({ kty: 'EC', crv: 'P-256' }), ['ES256']);
});

test('a hostile key set imports no key: refused as a set without a usable key', async () => {
  await assert.rejects(
    importKeySet({
      keys: [
        { kty: 'constructor', alg: 'RS256', k: 'x' },
        { kty: 'EC', crv: '__proto__', x: 'x', y: 'y' },
      ],
    }),
    /no usable verification key/,
  );
});
