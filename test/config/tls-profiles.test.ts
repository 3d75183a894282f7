/** PORTICO_TLS_PROFILES (src/config/readers.ts): `orgs` is a non-empty list of provider org names. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tlsProfiles } from '../../src/config/readers.ts';
import { PorticoError } from '../../src/errors.ts';

const read = (profiles: unknown) => tlsProfiles({ PORTICO_TLS_PROFILES: JSON.stringify(profiles) });

describe('PORTICO_TLS_PROFILES orgs', () => {
  it('reads a list of provider org names', () => {
    assert.deepEqual(read({ mtls: { cert: 'c.pem', key: 'k.pem', orgs: ['alpha', 'beta'] } }).mtls?.orgs, [
      'alpha',
      'beta',
    ]);
  });

  for (const orgs of ['alpha', [], [1], [''], null, { alpha: true }]) {
    it(`refuses orgs ${JSON.stringify(orgs)} with CONFIG_INVALID naming the setting`, () => {
      assert.throws(
        () => read({ mtls: { cert: 'c.pem', orgs } }),
        (error: unknown) =>
          error instanceof PorticoError &&
          error.code === 'CONFIG_INVALID' &&
          /PORTICO_TLS_PROFILES/.test(error.message) &&
          /profile mtls: .*orgs \(a non-empty list of provider org names\)/.test(error.message),
      );
    });
  }
});
