/**
 * jwt-validate's iss-claim and aud-claim: searched anywhere in the claim as API Connect does
 * (unanchored: the provider anchors with ^…$), matched on the linear engine (a claim is written
 * by whoever issued the token), and refused at import when the engine cannot run them.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey } from 'jose';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

let privateKey: CryptoKey;
let jwk: string;

before(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  jwk = JSON.stringify({ ...(await exportJWK(pair.publicKey)), kid: 'k1' });
});

function validating(claims: Record<string, string>) {
  return compile({ execute: [{ 'jwt-validate': { 'jws-jwk': 'api.properties.jwk', ...claims } }] }, {}, { jwk });
}

async function bearer(claims: Record<string, unknown>): Promise<Record<string, string>> {
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setExpirationTime('5m')
    .sign(privateKey);
  return { authorization: `Bearer ${token}` };
}

async function outcome(step: ReturnType<typeof validating>, claims: Record<string, unknown>): Promise<string> {
  try {
    await step(makeContext({ headers: await bearer(claims) }));
    return 'accepted';
  } catch (error) {
    assert.ok(error instanceof AssemblyError && error.status === 401, String(error));
    return 'refused';
  }
}

describe('jwt-validate claim patterns', () => {
  it('are searched anywhere in the claim unless the provider anchors them', async () => {
    const open = validating({ 'iss-claim': 'idp\\.example', 'aud-claim': 'portico' });
    assert.equal(
      await outcome(open, { iss: 'https://idp.example.evil.test', aud: ['x', 'not-portico-really'] }),
      'accepted',
    );
    const anchored = validating({ 'iss-claim': '^https://idp\\.example$', 'aud-claim': '^portico$' });
    assert.equal(await outcome(anchored, { iss: 'https://idp.example.evil.test', aud: 'portico' }), 'refused');
    assert.equal(await outcome(anchored, { iss: 'https://idp.example', aud: ['other', 'portico'] }), 'accepted');
  });

  it('answer a crafted claim against a backtracking-prone pattern at once', async () => {
    // V8: ~2^40 steps for these 40 letters and a "!".
    const step = validating({ 'iss-claim': '^(a+)+$' });
    assert.equal(await outcome(step, { iss: `${'a'.repeat(40)}!` }), 'refused');
    assert.equal(await outcome(step, { iss: 'aaaa' }), 'accepted');
  });

  it('are refused at import when the linear engine cannot run them', () => {
    const problems = assemblyProblems(
      { execute: [{ 'jwt-validate': { 'jws-jwk': 'jwk', 'iss-claim': '^(?!https://evil)', 'aud-claim': '(' } }] },
      {},
      [],
    );
    assert.deepEqual(
      problems.map((problem) => [problem.path, problem.rule]),
      [
        ['$.x-ibm-configuration.assembly.execute[0].jwt-validate.iss-claim', 'unsupported-pattern'],
        ['$.x-ibm-configuration.assembly.execute[0].jwt-validate.aud-claim', 'pattern-syntax'],
      ],
    );
  });
});
