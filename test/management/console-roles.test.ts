/**
 * The console and provider roles: each page leaves out the actions the user's role does not
 * grant, and the form posts behind them refuse it (403 naming the permission) even when sent
 * by hand; every state-changing console route names its permission.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { RouteOptions } from 'fastify';
import { createConsolePlugin } from '../../src/management/console/plugin.ts';
import { createManagementServer } from '../../src/management/server.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import { WebClient } from '../helpers/web-client.ts';

const example = (name: string) => readFileSync(new URL(`../../examples/accessories/${name}`, import.meta.url), 'utf8');
const password = 'console-pass-123';
const activate = '/console/apis/logistics/2.0.0/activate';
const publish = '/console/catalogs/sandbox/products/accessories/1.0.0/publish';
const approve = '/console/catalogs/sandbox/subscriptions/no-such-id/approve';

describe('console and roles', () => {
  let t: TestPlatform;
  const browsers: Record<string, WebClient> = {};
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    for (const file of ['logistics.yaml', 'financing.yaml'])
      assert.equal((await t.call('POST', '/api/apis', { document: example(file), file })).status, 201);
    const product = { document: example('accessories-product.yaml'), state: 'staged' };
    assert.equal((await t.call('POST', '/api/catalogs/sandbox/products', product)).status, 201);
    for (const role of ['viewer', 'developer', 'community-manager']) {
      const username = `console-${role}`;
      assert.equal((await t.call('POST', '/api/users', { username, password, role })).status, 201);
      const web = new WebClient(t.management);
      await web.get('/console/sign-in');
      assert.equal((await web.post('/console/sign-in', { username, password, next: '/console' })).status, 303);
      browsers[role] = web;
    }
  });
  after(async () => {
    await t.close();
  });

  const state = async (path: string) => (await t.call('GET', path)).body.state;

  test('a viewer sees no actions, and its hand-made form posts are refused naming the permission', async () => {
    const web = browsers.viewer;
    const apis = (await web.get('/console/apis')).text;
    assert.match(apis, /<li class="who">console-viewer · viewer<\/li>/, 'the header names the role');
    assert.doesNotMatch(apis, /Bring online|Take offline/);
    assert.doesNotMatch((await web.get('/console/products')).text, />\s*Publish\s*</);
    assert.doesNotMatch((await web.get('/console/oauth-providers')).text, /New provider/);
    await web.get('/console/apis');
    for (const [path, permission] of [
      [activate, 'apis:manage'],
      [publish, 'products:manage'],
      [approve, 'subscriptions:manage'],
    ]) {
      const answer = await web.post(path);
      assert.equal(answer.status, 403, path);
      assert.match(answer.text, new RegExp(`permission ${permission}`));
    }
    assert.equal((await web.get('/console/oauth-providers/new')).status, 403);
    assert.equal(await state('/api/apis/logistics/2.0.0'), 'offline');
    assert.equal(await state('/api/catalogs/sandbox/products/accessories/1.0.0'), 'staged');
  });

  test('a developer sees and uses the API and product actions, not the approval decisions', async () => {
    const web = browsers.developer;
    assert.match((await web.get('/console/apis')).text, /Bring online/);
    assert.match((await web.get('/console/products')).text, />\s*Publish\s*</);
    assert.equal((await web.post(activate)).status, 303);
    assert.equal(await state('/api/apis/logistics/2.0.0'), 'online');
    await web.get('/console/approvals');
    const refused = await web.post(approve);
    assert.equal(refused.status, 403);
    assert.match(refused.text, /permission subscriptions:manage/);
  });

  test('a community manager may decide subscriptions but not publish', async () => {
    const web = browsers['community-manager'];
    assert.doesNotMatch((await web.get('/console/products')).text, />\s*Publish\s*</);
    const refused = await web.post(publish);
    assert.equal(refused.status, 403);
    await web.get('/console/approvals');
    // Past the permission check: the subscription does not exist.
    assert.equal((await web.post(approve)).status, 404);
  });
});

test('every state-changing console route names a permission', async () => {
  const db = await sqliteTestStore();
  const services = new ProviderServices(db.store);
  const seen: RouteOptions[] = [];
  const collect = (
    app: Parameters<NonNullable<Parameters<typeof createManagementServer>[0]['plugins']>[number]>[0],
  ) => {
    app.addHook('onRoute', (route) => {
      seen.push(route);
    });
  };
  const plugins = [collect, createConsolePlugin({ services, sessionTtlMs: 60_000 })];
  const app = await createManagementServer({
    services,
    logger: pino({ level: 'silent' }),
    sessionTtlMs: 60_000,
    plugins,
  });
  try {
    await app.ready();
    const changing = seen.filter(
      (r) => r.url.startsWith('/console') && [r.method].flat().some((m) => !['GET', 'HEAD'].includes(m)),
    );
    assert.ok(changing.length >= 8, `found ${changing.length} console form routes`);
    for (const route of changing)
      assert.ok(route.config?.permission, `${String(route.method)} ${route.url} names no permission`);
    for (const url of ['/console/users', '/console/users/:username/role', '/console/users/:username/remove'])
      assert.equal(changing.find((r) => r.url === url)?.config?.permission, 'users:manage', url);
  } finally {
    await app.close();
    await db.dispose();
  }
});
