import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';

const example = (name: string) => readFileSync(new URL(`../../examples/accessories/${name}`, import.meta.url), 'utf8');
const logistics = example('logistics.yaml');
const financing = example('financing.yaml');
const product = example('accessories-product.yaml');

describe('management API', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
  });
  after(async () => {
    await t.close();
  });

  test('GET /health answers 200 once the store is ready', async () => {
    const response = await fetch(`${t.management}/health`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: 'ok' });
  });

  test('serves its own OpenAPI document listing every route', async () => {
    const { status, body } = await t.call('GET', '/api/openapi.json', undefined, null);
    assert.equal(status, 200);
    assert.equal(body.openapi, '3.1.0');
    assert.ok(body.paths['/api/apis'].post);
    assert.ok(body.paths['/api/catalogs/{catalog}/subscriptions/{id}/approve'].post);
    assert.deepEqual(body.paths['/api/login'].post.security, []);
  });

  test('refuses calls without a token, and a wrong password with a generic 401', async () => {
    const anonymous = await t.call('GET', '/api/apis', undefined, null);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.code, 'MGMT_UNAUTHENTICATED');
    const wrong = await t.call('POST', '/api/login', { username: 'admin', password: 'nope-nope-1' }, null);
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error.code, 'MGMT_BAD_CREDENTIALS');
    const unknown = await t.call('POST', '/api/login', { username: 'ghost', password: 'nope-nope-1' }, null);
    assert.deepEqual(unknown.body, wrong.body);
  });

  test('a missing body field is a 400 naming the field', async () => {
    const { status, body } = await t.call('POST', '/api/apis', { file: 'x.yaml' });
    assert.equal(status, 400);
    assert.equal(body.error.code, 'MGMT_VALIDATION');
    assert.equal(body.error.field, 'document');
  });

  test('imports an API offline; a duplicate name:version is a 409 and the first stays', async () => {
    const created = await t.call('POST', '/api/apis', { document: logistics, file: 'logistics.yaml' });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'logistics');
    assert.equal(created.body.version, '2.0.0');
    assert.equal(created.body.state, 'offline');
    const duplicate = await t.call('POST', '/api/apis', {
      document: logistics.replace('title: logistics', 'title: other'),
      file: 'copy.yaml',
    });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error.code, 'MGMT_CONFLICT');
    const stored = await t.call('GET', '/api/apis/logistics/2.0.0');
    assert.equal(stored.body.title, 'logistics');
    assert.equal(stored.body.document.info['x-ibm-name'], 'logistics');
  });

  test('a malformed YAML file is a 400 naming the file and line; nothing is stored', async () => {
    const before = (await t.call('GET', '/api/apis')).body.length;
    const { status, body } = await t.call('POST', '/api/apis', {
      document: 'swagger: "2.0"\ninfo: [unclosed\n',
      file: 'broken.yaml',
    });
    assert.equal(status, 400);
    assert.equal(body.error.code, 'DEF_PARSE');
    assert.match(body.error.message, /^broken\.yaml: /);
    assert.match(body.error.message, /line \d+, column \d+/);
    assert.equal((await t.call('GET', '/api/apis')).body.length, before);
  });

  test('an unknown policy is a 400 with the file, JSON path and rule; nothing is stored', async () => {
    const broken = logistics.replace('- gatewayscript:', '- gatewayscrypt:');
    const { status, body } = await t.call('POST', '/api/apis', {
      document: broken.replace('version: 2.0.0\n', 'version: 9.9.9\n'),
      file: 'bad.yaml',
    });
    assert.equal(status, 400);
    assert.equal(body.error.code, 'DEF_INVALID');
    assert.equal(body.error.file, 'bad.yaml');
    const problem = body.error.problems.find((p: { rule: string }) => p.rule === 'unknown-policy');
    assert.ok(problem, JSON.stringify(body.error.problems));
    assert.match(
      problem.path,
      /^\$\.x-ibm-configuration\.assembly\.execute\[0\]\.operation-switch\.case\[1\]\.execute\[1\]/,
    );
    const list = (await t.call('GET', '/api/apis')).body.map((a: { version: string }) => a.version);
    assert.equal(list.includes('9.9.9'), false);
  });

  test('a product naming an API that does not exist is refused and nothing is stored', async () => {
    const { status, body } = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: product,
      file: 'accessories-product.yaml',
    });
    assert.equal(status, 400);
    assert.equal(body.error.rule, 'unknown-api');
    assert.match(body.error.message, /financing:1\.0\.0/);
    const products = await t.call('GET', '/api/catalogs/sandbox/products');
    assert.deepEqual(products.body, []);
  });

  test('an unknown catalog is a 404', async () => {
    const { status, body } = await t.call('GET', '/api/catalogs/nowhere/products');
    assert.equal(status, 404);
    assert.equal(body.error.code, 'MGMT_NOT_FOUND');
  });

  test('publishes a product and moves it along the lifecycle; an illegal step is a 409', async () => {
    assert.equal((await t.call('POST', '/api/apis', { document: financing, file: 'financing.yaml' })).status, 201);
    const published = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: product,
      file: 'accessories-product.yaml',
      state: 'published',
    });
    assert.equal(published.status, 201);
    assert.equal(published.body.state, 'published');
    assert.deepEqual(published.body.visibility, { view: 'authenticated', subscribe: 'authenticated' });
    const again = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: product,
      file: 'accessories-product.yaml',
      state: 'published',
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.changed, false);

    const detail = await t.call('GET', '/api/catalogs/sandbox/products/accessories/1.0.0');
    assert.deepEqual(
      detail.body.plans.map((p: { name: string; approval: boolean }) => [p.name, p.approval]),
      [
        ['silver', false],
        ['gold', true],
      ],
    );
    assert.deepEqual(detail.body.apis.map((a: { name: string }) => a.name).sort(), ['financing', 'logistics']);

    const deprecated = await t.call('POST', '/api/catalogs/sandbox/products/accessories/1.0.0/deprecate');
    assert.equal(deprecated.body.state, 'deprecated');
    const archive = await t.call('POST', '/api/catalogs/sandbox/products/accessories/1.0.0/archive');
    assert.equal(archive.status, 409);
    assert.equal(
      (await t.call('POST', '/api/catalogs/sandbox/products/accessories/1.0.0/publish')).body.state,
      'published',
    );
  });

  test('activates and deactivates an API; deleting one a product uses is a 409', async () => {
    assert.equal((await t.call('POST', '/api/apis/logistics/2.0.0/activate')).body.state, 'online');
    assert.equal((await t.call('POST', '/api/apis/logistics/2.0.0/deactivate')).body.state, 'offline');
    const inUse = await t.call('DELETE', '/api/apis/logistics/2.0.0');
    assert.equal(inUse.status, 409);
    assert.match(inUse.body.error.message, /accessories:1\.0\.0/);
    const unused = await t.call('POST', '/api/apis', {
      document: logistics.replace('version: 2.0.0\n', 'version: 3.0.0\n'),
      file: 'l3.yaml',
    });
    assert.equal(unused.status, 201);
    assert.equal((await t.call('DELETE', '/api/apis/logistics/3.0.0')).status, 204);
    assert.equal((await t.call('GET', '/api/apis/logistics/3.0.0')).status, 404);
  });

  test('lists pending subscriptions and approves or rejects them once', async () => {
    const services = t.platform.services;
    const consumerServices = t.platform.consumerServices;
    const catalog = await services.catalog(t.orgId, 'sandbox');
    const { org } = await consumerServices.signUp(catalog.id, {
      email: 'dev@example.com',
      password: 'dev-pass-1234',
    });
    const { app } = await consumerServices.createApp(org.id, { title: 'App' });
    const productRow = await services.product(t.orgId, 'sandbox', 'accessories', '1.0.0');
    const pending = await consumerServices.subscribe(org.id, {
      appId: app.id,
      productId: productRow.id,
      planName: 'gold',
    });
    assert.equal(pending.state, 'pending');

    const list = await t.call('GET', '/api/catalogs/sandbox/subscriptions?state=pending');
    assert.deepEqual(
      list.body.map((s: { id: string; app_title: string; plan_name: string }) => [s.id, s.app_title, s.plan_name]),
      [[pending.id, 'App', 'gold']],
    );
    const approved = await t.call('POST', `/api/catalogs/sandbox/subscriptions/${pending.id}/approve`);
    assert.equal(approved.body.state, 'active');
    const twice = await t.call('POST', `/api/catalogs/sandbox/subscriptions/${pending.id}/reject`);
    assert.equal(twice.status, 409);
    assert.equal((await t.call('GET', '/api/catalogs/sandbox/subscriptions?state=bogus')).status, 400);
  });

  test('adds provider users; a weak password or an email that is no address is refused naming the field', async () => {
    const weak = await t.call('POST', '/api/users', { username: 'ops', password: 'short' });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error.field, 'password');
    const notAddress = await t.call('POST', '/api/users', { username: 'ops', email: 'ops', password: 'long-enough-9' });
    assert.equal(notAddress.status, 400);
    assert.equal(notAddress.body.error.field, 'email');
    const ok = await t.call('POST', '/api/users', {
      username: 'ops',
      email: 'Ops@Example.com',
      password: 'long-enough-9',
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.email, 'ops@example.com');
    const users = await t.call('GET', '/api/users');
    assert.deepEqual(
      users.body.map((u: { username: string }) => u.username),
      ['admin', 'ops'],
    );
  });

  test('issue-12: POST /api/users answers a name taken in another org as one taken in its own', async () => {
    const other = await t.platform.services.ensureOrg('rival', 'Rival');
    const rival = { username: 'rival-admin', email: '', password: 'rival-pass-123' };
    await t.platform.services.addProviderUser(other.orgId, rival);
    const theirs = await t.call('POST', '/api/users', { username: 'rival-admin', password: 'long-enough-9' });
    const ours = await t.call('POST', '/api/users', { username: 'admin', password: 'long-enough-9' });
    assert.equal(theirs.status, 409);
    assert.equal(ours.status, 409);
    const sameButName = {
      ...ours.body.error,
      message: ours.body.error.message.replace('admin', 'rival-admin'),
    };
    assert.deepEqual(theirs.body.error, sameButName);
    assert.equal(theirs.body.error.message, 'the user name rival-admin is not available; choose another');
    assert.equal(theirs.body.error.field, 'username');
  });

  test('logout ends the token', async () => {
    const login = await t.call('POST', '/api/login', { username: 'ops', password: 'long-enough-9' }, null);
    assert.equal((await t.call('GET', '/api/me', undefined, login.body.token)).body.username, 'ops');
    assert.equal((await t.call('POST', '/api/logout', undefined, login.body.token)).status, 204);
    assert.equal((await t.call('GET', '/api/me', undefined, login.body.token)).status, 401);
  });
});

describe('publishing and base paths', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
  });
  after(async () => {
    await t.close();
  });

  test('a product whose API would share a base path with another published API is a 409, and nothing changes', async () => {
    await t.call('POST', '/api/apis', { document: logistics, file: 'logistics.yaml' });
    await t.call('POST', '/api/apis', { document: financing, file: 'financing.yaml' });
    assert.equal(
      (
        await t.call('POST', '/api/catalogs/sandbox/products', {
          document: product,
          file: 'p.yaml',
          state: 'published',
        })
      ).status,
      201,
    );
    const twin = logistics.replace('version: 2.0.0\n', 'version: 2.1.0\n');
    assert.equal((await t.call('POST', '/api/apis', { document: twin, file: 'twin.yaml' })).status, 201);
    const other =
      'product: 1.0.0\ninfo: {name: twin, title: Twin, version: 1.0.0}\nplans: {default: {title: Default}}\napis: {logistics: {name: "logistics:2.1.0"}}\n';
    const clash = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: other,
      file: 'twin-product.yaml',
      state: 'published',
    });
    assert.equal(clash.status, 409);
    assert.match(
      clash.body.error.message,
      /base path \/logistics, already served in this catalog by logistics:2\.0\.0/,
    );
    assert.deepEqual(
      (await t.call('GET', '/api/catalogs/sandbox/products')).body.map((p: { name: string }) => p.name),
      ['accessories'],
    );
    const staged = await t.call('POST', '/api/catalogs/sandbox/products', {
      document: other,
      file: 'twin-product.yaml',
      state: 'staged',
    });
    assert.equal(staged.status, 201);
  });
});

describe('bad input is a 400 naming the field, never a 500 nor silently ignored', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
  });
  after(async () => {
    await t.close();
  });

  const refused = (answer: { status: number; body: { error: { code: string; field: string } } }, field: string) => {
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error.code, 'MGMT_VALIDATION');
    assert.equal(answer.body.error.field, field);
  };

  test('a repeated query filter (analytics, subscriptions) is a 400 naming the parameter', async () => {
    const events = '/api/catalogs/sandbox/analytics/events';
    refused(await t.call('GET', `${events}?api=a&api=b`), 'api');
    refused(await t.call('GET', `${events}?limit=5&limit=6`), 'limit');
    assert.equal((await t.call('GET', `${events}?api=logistics&limit=5`)).status, 200);
    refused(await t.call('GET', '/api/catalogs/sandbox/subscriptions?state=pending&state=active'), 'state');
  });

  test("each import route has its own states: another route's state is a 400 listing them; nothing is stored", async () => {
    const apiState = await t.call('POST', '/api/apis', { document: logistics, file: 'l.yaml', state: 'published' });
    refused(apiState, 'state');
    assert.match(apiState.body.error.message, /online, offline/);
    assert.deepEqual((await t.call('GET', '/api/apis')).body, []);
    assert.equal((await t.call('POST', '/api/apis', { document: logistics, file: 'l.yaml' })).status, 201);
    assert.equal((await t.call('POST', '/api/apis', { document: financing, file: 'f.yaml' })).status, 201);
    for (const state of ['online', 'offline']) {
      const productState = await t.call('POST', '/api/catalogs/sandbox/products', { document: product, state });
      refused(productState, 'state');
      assert.match(productState.body.error.message, /staged, published/);
    }
    assert.deepEqual((await t.call('GET', '/api/catalogs/sandbox/products')).body, []);
    const staged = await t.call('POST', '/api/catalogs/sandbox/products', { document: product, state: 'staged' });
    assert.equal(staged.body.state, 'staged');
    const publish = '/api/catalogs/sandbox/products/accessories/1.0.0/publish';
    refused(await t.call('POST', `${publish}?activate=false&activate=false`), 'activate');
    assert.equal((await t.call('GET', '/api/catalogs/sandbox/products/accessories/1.0.0')).body.state, 'staged');
  });

  test('console static files: __proto__ and constructor are unknown files (404), not Object.prototype', async () => {
    const web = new WebClient(t.management);
    await web.get('/console/sign-in');
    const form = { username: 'admin', password: adminPassword, next: '/console' };
    assert.equal((await web.post('/console/sign-in', form)).status, 303);
    assert.equal((await web.get('/console/static/portal.css')).status, 200);
    for (const name of ['nope.css', '__proto__', 'constructor', 'toString']) {
      assert.equal((await web.get(`/console/static/${name}`)).status, 404, name);
    }
  });
});
