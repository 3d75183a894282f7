/**
 * Basic authentication through a real gateway (issue 13): an API whose basic scheme names an
 * authentication URL registry (a local node:http server started here). 200 from the URL lets
 * the call through with the user in `request.authenticated-credential`; anything else is 401
 * with `WWW-Authenticate`; a registry down or silent is 503; a registry the catalog does not
 * enable is refused at publish and, for a stored document, by the gateway.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { UserRegistries } from '../../src/services/user-registries.ts';
import { VerdictCache } from '../../src/identity/verdict-cache.ts';
import { clientIdScheme, secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { SecurityPlatform } from '../helpers/security-api.ts';

const good = `Basic ${Buffer.from('alice:alice-pass-1').toString('base64')}`;
const wrong = `Basic ${Buffer.from('alice:nope').toString('base64')}`;

let platform: SecurityPlatform;
let registries: UserRegistries;
let authServer: Server;
let authUrl: string;
let calls = 0;

const echoUser = {
  execute: [{ 'set-variable': { actions: [{ set: 'message.body', value: '$(request.authenticated-credential)' }] } }],
};
const basicApi = (registry: string) =>
  secApi({
    schemes: { b: { type: 'basic', 'x-ibm-authentication-registry': registry } },
    security: [{ b: [] }],
    ibm: { assembly: echoUser },
  });

before(async () => {
  authServer = createServer((req, res) => {
    calls++;
    if (req.url === '/silent') return; // never answers: the gateway's timeout decides
    res.writeHead(req.headers.authorization === good ? 200 : 403).end();
  });
  await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));
  authUrl = `http://127.0.0.1:${(authServer.address() as { port: number }).port}`;
  platform = await startSecurityPlatform();
  registries = new UserRegistries(platform.t.platform.services);
  const orgId = platform.t.orgId;
  await registries.create(orgId, {
    name: 'staff',
    registry_type: 'authurl',
    configuration: { url: `${authUrl}/check`, timeout: 2 },
  });
  await registries.create(orgId, {
    name: 'down',
    registry_type: 'authurl',
    configuration: { url: 'http://127.0.0.1:1/', timeout: 1 },
  });
  await registries.create(orgId, {
    name: 'silent',
    registry_type: 'authurl',
    configuration: { url: `${authUrl}/silent`, timeout: 1 },
  });
  await registries.create(orgId, {
    name: 'elsewhere',
    registry_type: 'authurl',
    configuration: { url: `${authUrl}/check` },
  });
  for (const name of ['staff', 'down', 'silent']) await registries.enable(orgId, 'sandbox', name);
});
after(async () => {
  await platform?.close();
  authServer?.closeAllConnections();
  await new Promise((resolve) => authServer?.close(resolve));
});

const call = (authorization?: string) =>
  fetch(`${platform.base}/thing?n=1`, { headers: authorization === undefined ? {} : { authorization } });

describe('basic scheme with an authentication URL registry', () => {
  test('no Authorization header: 401 with WWW-Authenticate naming the registry', async () => {
    await platform.publish(basicApi('staff'));
    const response = await call();
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="staff"');
    assert.equal(((await response.json()) as { httpCode: string }).httpCode, '401');
  });
  test('a wrong password: 401 (the URL answered 403)', async () => {
    const response = await call(wrong);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="staff"');
  });
  test('the right password: 200, the user in request.authenticated-credential; the answer is cached', async () => {
    const before = calls;
    const first = await call(good);
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'alice');
    assert.equal((await call(good)).status, 200);
    assert.equal(calls, before + 1, 'the second call is answered from the cache');
  });
  test('issue-13: the authenticated user is recorded in the activity log and served by the analytics API', async () => {
    const txId = (await call(good)).headers.get('x-global-transaction-id');
    const deadline = Date.now() + 10_000;
    let event: Record<string, unknown> | undefined;
    while (event === undefined && Date.now() < deadline) {
      const { body } = await platform.t.call('GET', '/api/catalogs/sandbox/analytics/events?api=sec&limit=100');
      event = (body as Array<Record<string, unknown>>).find((e) => e.tx_id === txId);
      if (event === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(event?.user_name, 'alice', JSON.stringify(event));
  });
  test('a refusal is not cached: each wrong attempt asks the registry', async () => {
    const before = calls;
    await call(wrong);
    await call(wrong);
    assert.equal(calls, before + 2);
  });
  test('a registry that refuses connections: 503 GW_REGISTRY_UNAVAILABLE, never open', async () => {
    await platform.publish(basicApi('down'));
    const response = await call(good);
    assert.equal(response.status, 503);
    assert.match(((await response.json()) as { moreInformation: string }).moreInformation, /user registry/);
  });
  // Found by a review (Session 15): with a client id beside the basic scheme, a client id the
  // gateway knew (any organization's) but that could not call the API got the registry's verdict
  // (401 "Invalid user name or password", or a 503 when the registry was down) where an unknown
  // one got "Invalid client id or secret.", and the registry was asked for it: an oracle for
  // client ids, and free calls to the registry.
  test('beside a client id: a known but unsubscribed client id answers as an unknown one, and asks no registry', async () => {
    const stranger = await platform.newApp();
    for (const registry of ['staff', 'down']) {
      await platform.publish(
        secApi({
          schemes: { id: clientIdScheme, b: { type: 'basic', 'x-ibm-authentication-registry': registry } },
          security: [{ id: [], b: [] }],
        }),
      );
      const before = calls;
      const answers: string[] = [];
      for (const clientId of [stranger.clientId, 'f'.repeat(32)]) {
        for (const authorization of [good, wrong]) {
          const response = await fetch(`${platform.base}/thing?n=1`, {
            headers: { 'X-IBM-Client-Id': clientId, authorization },
          });
          answers.push(`${response.status} ${await response.text()}`);
        }
      }
      assert.equal(new Set(answers).size, 1, `${registry}: ${answers.join(' | ')}`);
      assert.match(answers[0], /^401 .*Invalid client id or secret/);
      assert.equal(calls, before, `${registry}: the registry was asked`);
    }
  });
  test('a registry that does not answer within its timeout: 503', async () => {
    await platform.publish(basicApi('silent'));
    const started = Date.now();
    const response = await call(good);
    assert.equal(response.status, 503);
    assert.ok(Date.now() - started < 5000);
  });
  test('publishing an API whose registry the catalog does not enable is refused', async () => {
    await assert.rejects(
      platform.publish(basicApi('elsewhere')),
      (error: Error & { code?: string; params?: { rule?: string } }) => {
        assert.equal(error.code, 'DEF_INVALID');
        assert.equal(error.params?.rule, 'unknown-user-registry');
        return true;
      },
    );
  });
  test('a stored document naming an unknown registry is refused by the gateway (500), with or without credentials', async () => {
    await platform.publish(basicApi('staff'));
    await platform.store(basicApi('nobody'));
    assert.equal((await call(good)).status, 500);
    assert.equal((await call()).status, 500);
  });
});

describe('user registry management', () => {
  test('the LDAP bind password is never returned', async () => {
    const orgId = platform.t.orgId;
    const created = await registries.create(orgId, {
      name: 'corp',
      registry_type: 'ldap',
      configuration: {
        url: 'ldap://127.0.0.1:1',
        admin_dn: 'cn=a',
        admin_password: 'top-secret-1',
        search_dn_base: 'dc=x',
      },
    });
    assert.equal(JSON.stringify(created).includes('top-secret-1'), false);
    assert.equal(created.configuration.admin_password_set, true);
    assert.equal(JSON.stringify(await registries.list(orgId)).includes('top-secret-1'), false);
  });
  test('invalid configurations name the field', async () => {
    const orgId = platform.t.orgId;
    await assert.rejects(
      registries.create(orgId, { name: 'x1', registry_type: 'authurl', configuration: { url: 'ftp://a' } }),
      /configuration.url/,
    );
    await assert.rejects(
      registries.create(orgId, { name: 'x2', registry_type: 'ldap', configuration: { url: 'ldap://a' } }),
      /search_dn_base/,
    );
    await assert.rejects(
      registries.create(orgId, { name: 'Bad Name', registry_type: 'authurl', configuration: {} }),
      /name/,
    );
  });
});

describe('the answer cache is bounded', () => {
  test('never holds more than maxEntries; the oldest goes first; entries expire', () => {
    const cache = new VerdictCache({ ttlMs: 1000, maxEntries: 3 });
    const tenant = cache.partition('acme');
    for (let i = 0; i < 10; i++) tenant.set(`k${i}`, `u${i}`, 0);
    assert.equal(cache.size, 3);
    assert.equal(tenant.get('k0', 1), undefined);
    assert.equal(tenant.get('k9', 1), 'u9');
    assert.equal(tenant.get('k9', 1001), undefined);
  });
});
