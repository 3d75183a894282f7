/**
 * jwt-validate's cache of accepted tokens (src/policies/jose/verified-cache.ts) with real keys
 * imported by the policy's own key-set reader, on a clock the test sets: entry lifetime (token
 * exp, TTL), the key-set check, fresh claims per hit, and the bounds in entries and bytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { importKeySet } from '../../../src/policies/jose/key-set.ts';
import type { VerificationKey } from '../../../src/policies/jose/key-set.ts';
import { VerifiedTokenCache } from '../../../src/policies/jose/verified-cache.ts';

async function keySet(kid: string): Promise<VerificationKey[]> {
  const { publicKey } = await generateKeyPair('ES256', { extractable: true });
  return importKeySet({ keys: [{ ...(await exportJWK(publicKey)), kid }] });
}

const t0 = 1_900_000_000_000;
const seconds = (ms: number) => Math.floor(ms / 1000);
const bounds = { ttlMs: 60_000, maxEntries: 100, maxBytes: 1024 * 1024 };

describe('verified token cache', () => {
  test('a hit returns equal claims, a new object each time', async () => {
    const keys = await keySet('a');
    const cache = new VerifiedTokenCache(bounds, 30);
    cache.set('tok', { sub: 'alice', exp: seconds(t0) + 300, roles: ['x'] }, keys[0], t0);
    const first = cache.get('tok', keys, t0 + 1000)!;
    assert.deepEqual(first, { sub: 'alice', exp: seconds(t0) + 300, roles: ['x'] });
    (first.roles as string[]).push('admin');
    assert.deepEqual(cache.get('tok', keys, t0 + 2000)!.roles, ['x']);
  });

  test('an entry is not used from the token exp on, nor after the TTL', async () => {
    const keys = await keySet('a');
    const cache = new VerifiedTokenCache(bounds, 30);
    cache.set('short', { exp: seconds(t0) + 10 }, keys[0], t0);
    cache.set('long', { exp: seconds(t0) + 3600 }, keys[0], t0);
    cache.set('no-exp', { sub: 'x' }, keys[0], t0);
    assert.ok(cache.get('short', keys, t0 + 9_000));
    assert.equal(cache.get('short', keys, t0 + 10_000), undefined);
    assert.ok(cache.get('long', keys, t0 + 59_000));
    assert.equal(cache.get('long', keys, t0 + 60_000), undefined);
    assert.equal(cache.get('no-exp', keys, t0 + 60_000), undefined);
    assert.equal(cache.size, 0, 'expired entries are dropped when met');
  });

  test('an already expired token or one not valid yet at the clock is never answered', async () => {
    const keys = await keySet('a');
    const cache = new VerifiedTokenCache(bounds, 30);
    cache.set('expired', { exp: seconds(t0) - 1 }, keys[0], t0);
    assert.equal(cache.get('expired', keys, t0), undefined);
    cache.set('later', { nbf: seconds(t0) + 31, exp: seconds(t0) + 600 }, keys[0], t0);
    assert.equal(cache.get('later', keys, t0), undefined, 'nbf beyond the 30 s leeway');
    assert.ok(cache.get('later', keys, t0 + 2000), 'nbf within the leeway, as jose judges it');
  });

  test('an entry serves only while the key that verified it is in the current key set', async () => {
    const before = await keySet('a');
    const refreshed = await keySet('a');
    const cache = new VerifiedTokenCache(bounds, 30);
    cache.set('tok', { exp: seconds(t0) + 300 }, before[0], t0);
    assert.ok(cache.get('tok', [...refreshed, ...before], t0));
    assert.equal(cache.get('tok', refreshed, t0), undefined, 'a key set fetched again without the key');
    assert.equal(cache.get('tok', before, t0), undefined, 'the entry is gone, not only skipped');
  });

  test('filled far beyond its bounds, the cache stays within them, oldest out first', async () => {
    const keys = await keySet('a');
    const cache = new VerifiedTokenCache(bounds, 30);
    for (let i = 0; i < 1000; i++) cache.set(`token-${i}`, { sub: `user-${i}`, exp: seconds(t0) + 300 }, keys[0], t0);
    assert.equal(cache.size, 100);
    assert.equal(cache.get('token-899', keys, t0), undefined);
    assert.ok(cache.get('token-900', keys, t0));

    const small = new VerifiedTokenCache({ ttlMs: 60_000, maxEntries: 10_000, maxBytes: 64 * 1024 }, 30);
    const padding = 'p'.repeat(1000);
    for (let i = 0; i < 1000; i++) small.set(`token-${i}`, { sub: `user-${i}`, padding }, keys[0], t0);
    assert.ok(small.bytes <= 64 * 1024, `${small.bytes} bytes`);
    assert.ok(small.size > 0 && small.size < 64, `${small.size} entries`);
    small.set('huge', { padding: 'p'.repeat(8 * 1024) }, keys[0], t0);
    assert.equal(small.get('huge', keys, t0), undefined, 'one token may not take more than a sixteenth of the bytes');
  });
});
