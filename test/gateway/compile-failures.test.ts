/**
 * Issue 17, item 2: an API the import accepts but a gateway cannot compile (here: a TLS profile
 * this gateway does not have) is left out of the snapshot — and now said so: in the gateway's
 * /ready, in the management API and on the console's API page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const api = JSON.stringify({
  swagger: '2.0',
  info: { title: 'Vault', version: '1.0.0', 'x-ibm-name': 'vault' },
  basePath: '/vault',
  paths: { '/x': { get: { responses: { 200: { description: 'ok' } } } } },
  'x-ibm-configuration': {
    assembly: {
      execute: [{ invoke: { 'target-url': 'https://127.0.0.1:9/x', 'tls-profile': 'no-such-profile' } }],
    },
  },
});

const product = `product: 1.0.0
info: { name: vault-product, title: Vault, version: 1.0.0 }
plans:
  default: { title: Default, approval: false, rate-limits: { default: { value: 10/1minute } } }
apis:
  vault: { name: 'vault:1.0.0' }
`;

interface Failure {
  api: string;
  org: string;
  catalog: string;
  reason: string;
}

describe('APIs the gateway cannot compile are reported', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform();
    assert.equal(
      (await t.call('POST', '/api/apis', { document: api, file: 'vault.json' })).status,
      201,
      'the import accepts it',
    );
    assert.equal((await t.call('POST', '/api/apis/vault/1.0.0/activate')).status, 200);
    const published = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: product,
      file: 'vault.yaml',
      state: 'published',
    });
    assert.equal(published.status, 201, JSON.stringify(published.body));
  });
  after(() => t.close());

  async function readyFailures(): Promise<Failure[]> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const body = (await (await fetch(`${t.status}/ready`)).json()) as { failures?: Failure[] };
      if ((body.failures ?? []).length > 0) return body.failures ?? [];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return [];
  }

  test("the gateway's /ready lists the API, where it is published and why; the node stays ready", async () => {
    const failures = await readyFailures();
    assert.equal(failures.length, 1, 'one failure in /ready');
    assert.deepEqual(
      { ...failures[0], reason: undefined },
      { api: 'vault:1.0.0', org: 'acme', catalog: 'sandbox', reason: undefined },
    );
    assert.match(failures[0].reason, /no-such-profile/);
    assert.equal((await fetch(`${t.status}/ready`)).status, 200);
  });

  test('the management API lists it for the catalog', async () => {
    await readyFailures();
    const { status, body } = await t.call('GET', '/api/catalogs/sandbox/gateway-failures');
    assert.equal(status, 200);
    assert.equal(body.gateway, 'in-process');
    assert.deepEqual(
      body.failures.map((f: Failure) => f.api),
      ['vault:1.0.0'],
    );
    assert.match(body.failures[0].reason, /no-such-profile/);
    assert.equal((await t.call('GET', '/api/catalogs/nowhere/gateway-failures')).status, 404);
  });

  test("the console's API page shows a notice with the reason", async () => {
    await readyFailures();
    const form = await fetch(`${t.management}/console/sign-in`);
    const preSession = form.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const signIn = await fetch(`${t.management}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: preSession, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        _csrf: csrf,
        username: 'admin',
        password: adminPassword,
        next: '/console',
      }),
    });
    const session = signIn.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .find((c) => /^portico_console=./.test(c));
    assert.ok(session);
    const page = await (
      await fetch(`${t.management}/console/apis/vault/1.0.0`, { headers: { cookie: session } })
    ).text();
    assert.match(page, /role="alert"[^]*does not serve this API[^]*no-such-profile/);
  });
});
