/**
 * The user-registry answer cache is shared by every tenant of a gateway, so its eviction must
 * be fair: one provider org whose registry accepts everything (or a flood of distinct
 * credentials against one org's API) must not push another org's cached answers out, which
 * would send every call of that org to its registry. Two orgs through a real gateway, each
 * with its own authentication URL registry (a local node:http server counting the calls).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { UserRegistries } from '../../src/services/user-registries.ts';
import { VerdictCache } from '../../src/identity/verdict-cache.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const good = basic('bob', 'bob-pass-1');
const cacheEntries = 20;

let t: TestPlatform;
let authServer: Server;
const calls = { open: 0, strict: 0 };

/** `/open` accepts any credentials (the churning tenant); `/strict` only bob's. */
function answer(path: string, authorization: string | undefined): number {
  if (path === '/open') return 200;
  return authorization === good ? 200 : 403;
}

const api = (registry: string) => ({
  swagger: '2.0',
  basePath: '/who',
  securityDefinitions: { b: { type: 'basic', 'x-ibm-authentication-registry': registry } },
  security: [{ b: [] }],
  info: { title: 'Who', version: '1.0.0', 'x-ibm-name': 'who' },
  paths: { '/me': { get: { operationId: 'me', responses: { 200: { description: 'ok' } } } } },
  'x-ibm-configuration': {
    assembly: {
      execute: [
        { 'set-variable': { actions: [{ set: 'message.body', value: '$(request.authenticated-credential)' }] } },
      ],
    },
  },
});
const product = `product: 1.0.0
info: { name: who, title: Who, version: 1.0.0 }
plans: { default: { title: Default } }
apis: { who: { name: 'who:1.0.0' } }
`;

const call = (org: string, authorization: string) =>
  fetch(`${t.gateway}/${org}/sandbox/who/me`, { headers: { authorization } });

before(async () => {
  authServer = createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/open') calls.open++;
    else calls.strict++;
    res.writeHead(answer(path, req.headers.authorization)).end();
  });
  await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));
  const authUrl = `http://127.0.0.1:${(authServer.address() as { port: number }).port}`;
  t = await startTestPlatform({
    env: { PORTICO_USER_REGISTRY_CACHE_ENTRIES: String(cacheEntries), PORTICO_USER_REGISTRY_CACHE_SECONDS: '300' },
  });
  const services = t.platform.services;
  const registries = new UserRegistries(services);
  const churn = await services.ensureOrg('churn', 'Churn');
  for (const [orgId, registry, path] of [
    [t.orgId, 'staff', '/strict'],
    [churn.orgId, 'anyone', '/open'],
  ]) {
    await registries.create(orgId, {
      name: registry,
      registry_type: 'authurl',
      configuration: { url: `${authUrl}${path}`, timeout: 2 },
    });
    await registries.enable(orgId, 'sandbox', registry);
    await services.importApi(orgId, {
      text: JSON.stringify(api(registry)),
      file: 'who.json',
      replace: true,
      state: 'online',
    });
    await services.putProduct(orgId, 'sandbox', { text: product, file: 'who-product.yaml', state: 'published' });
  }
  await t.platform.gateway!.reload();
});
after(async () => {
  await t?.close();
  authServer?.closeAllConnections();
  await new Promise((resolve) => authServer?.close(resolve));
});

describe('the user-registry answer cache across tenants', () => {
  test("one org's many distinct credentials do not evict another org's cached answer", async () => {
    const first = await call('acme', good);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'bob');
    assert.equal(calls.strict, 1);
    for (let i = 0; i < cacheEntries * 3; i++) {
      const response = await call('churn', basic(`user${i}`, `pass-${i}`));
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    assert.equal(calls.open, cacheEntries * 3, 'every distinct credential of the churning org asked its registry');
    const again = await call('acme', good);
    assert.equal(again.status, 200);
    assert.equal(await again.text(), 'bob');
    assert.equal(calls.strict, 1, "acme's answer was served from the cache, not asked again");
  });
  test('a refusal is still never cached: each wrong password asks the registry', async () => {
    const before = calls.strict;
    for (let i = 0; i < 2; i++) assert.equal((await call('acme', basic('bob', 'wrong'))).status, 401);
    assert.equal(calls.strict, before + 2);
  });
});

describe('VerdictCache partitions', () => {
  test('the global bound holds; a full cache evicts from the largest partition, oldest first', () => {
    const cache = new VerdictCache({ ttlMs: 1000, maxEntries: 10 });
    const a = cache.partition('a');
    const b = cache.partition('b');
    b.set('b0', 'ub0', 0);
    b.set('b1', 'ub1', 0);
    for (let i = 0; i < 100; i++) a.set(`a${i}`, `ua${i}`, 0);
    assert.equal(cache.size, 10);
    assert.equal(cache.sizeOf('a'), 8);
    assert.equal(b.get('b0', 1), 'ub0');
    assert.equal(a.get('a91', 1), undefined, "a's oldest went first");
    assert.equal(a.get('a99', 1), 'ua99');
  });
  test('a new tenant takes entries from the largest one until the shares are even', () => {
    const cache = new VerdictCache({ ttlMs: 1000, maxEntries: 10 });
    for (let i = 0; i < 10; i++) cache.partition('a').set(`a${i}`, 'u', 0);
    for (let i = 0; i < 20; i++) cache.partition('b').set(`b${i}`, 'u', 0);
    assert.equal(cache.sizeOf('a'), 5);
    assert.equal(cache.sizeOf('b'), 5);
    assert.equal(cache.size, 10);
  });
  test('a key in one partition is not found in another; entries still expire', () => {
    const cache = new VerdictCache({ ttlMs: 1000, maxEntries: 10 });
    cache.partition('a').set('k', 'alice', 0);
    assert.equal(cache.partition('b').get('k', 1), undefined);
    assert.equal(cache.partition('a').get('k', 999), 'alice');
    assert.equal(cache.partition('a').get('k', 1000), undefined);
    assert.equal(cache.size, 0);
  });
});
