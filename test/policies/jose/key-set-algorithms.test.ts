/**
 * Which algorithms a JWK verifies when it does not name one (many identity providers' JWKS leave
 * `alg` out): every one its key type allows (RFC 7518 §3.1), never HS* with a public key, never
 * `none`, and no more than the policy's `jws-algorithms` allows.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, UnsecuredJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import { keyAlgorithms } from '../../../src/policies/jose/key-set.ts';
import { compile, makeContext } from '../helpers.ts';

/** A key pair; `jwk` is its public half as a JWKS without `alg` gives it. */
async function keyPair(alg: string) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const { alg: _named, ...jwk } = await exportJWK(publicKey);
  return { privateKey: await exportJWK(privateKey), publicKey, jwk: { ...jwk, kid: 'k1' } as JWK };
}

/** A token signed with `key` under `alg` (a private JWK is imported for that algorithm). */
async function sign(key: JWK | Uint8Array, alg: string): Promise<string> {
  const material: CryptoKey | Uint8Array = key instanceof Uint8Array ? key : await importJWK(key, alg);
  return new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg, kid: 'k1' }).setExpirationTime('5m').sign(material);
}

/** Runs jwt-validate with `jwk` as its key (and `algorithms` as jws-algorithms): the claims, or the refusal. */
async function validate(jwk: JWK, token: string, algorithms?: string[]): Promise<unknown> {
  const step = compile(
    {
      execute: [
        {
          'jwt-validate': {
            version: '2.0.0',
            'jws-jwk': 'api.properties.key',
            ...(algorithms === undefined ? {} : { 'jws-algorithms': algorithms }),
          },
        },
      ],
    },
    {},
    { key: JSON.stringify({ keys: [jwk] }) },
  );
  const ctx = makeContext({ headers: { authorization: `Bearer ${token}` } });
  try {
    await step(ctx);
    return ctx.get('decoded.claims');
  } catch (error) {
    return error;
  }
}

const accepted = (outcome: unknown) => (outcome as { sub?: unknown } | undefined)?.sub === 'alice';

describe('jwt-validate: a JWK without alg', () => {
  test('an RSA key verifies RS256, RS384, RS512, PS256, PS384 and PS512 tokens', async () => {
    const { privateKey, jwk } = await keyPair('RS256');
    for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']) {
      assert.ok(accepted(await validate(jwk, await sign(privateKey, alg))), alg);
    }
  });

  test('an RSA key never verifies an HS256 token signed with the public key, nor an unsigned one', async () => {
    const { publicKey, jwk } = await keyPair('RS256');
    const pem = new TextEncoder().encode(await exportSPKI(publicKey));
    assert.equal(accepted(await validate(jwk, await sign(pem, 'HS256'))), false);
    const unsigned = new UnsecuredJWT({ sub: 'alice' }).setExpirationTime('5m').encode();
    assert.equal(accepted(await validate(jwk, unsigned)), false);
  });

  test('an EC key verifies the ES algorithm of its curve only', async () => {
    const p256 = await keyPair('ES256');
    assert.ok(accepted(await validate(p256.jwk, await sign(p256.privateKey, 'ES256'))));
    const p384 = await keyPair('ES384');
    assert.ok(accepted(await validate(p384.jwk, await sign(p384.privateKey, 'ES384'))));
    assert.deepEqual(keyAlgorithms(p256.jwk), ['ES256']);
    assert.deepEqual(keyAlgorithms({ ...p384.jwk, crv: 'P-521' }), ['ES512']);
  });

  test('an Ed25519 key verifies EdDSA', async () => {
    const { privateKey, jwk } = await keyPair('Ed25519');
    assert.ok(accepted(await validate(jwk, await sign(privateKey, 'EdDSA'))));
    assert.ok(!keyAlgorithms(jwk).some((alg) => alg.startsWith('HS') || alg === 'none'));
  });

  test("the policy's jws-algorithms still decides: RS256 only refuses a PS256 token", async () => {
    const { privateKey, jwk } = await keyPair('RS256');
    assert.ok(accepted(await validate(jwk, await sign(privateKey, 'RS256'), ['RS256'])));
    assert.equal(accepted(await validate(jwk, await sign(privateKey, 'PS256'), ['RS256'])), false);
  });

  test('a key that names its alg verifies that one only', async () => {
    const { privateKey, jwk } = await keyPair('RS256');
    const named = { ...jwk, alg: 'RS256' };
    assert.ok(accepted(await validate(named, await sign(privateKey, 'RS256'))));
    assert.equal(accepted(await validate(named, await sign(privateKey, 'PS256'))), false);
  });
});
