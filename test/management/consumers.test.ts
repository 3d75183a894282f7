/**
 * Issue 16, item 6, the REST side: a provider creates and reads a consumer organization's apps
 * (the secret in the create answer only) and subscriptions (pending when the plan needs
 * approval), deletes them, and publishing a product brings its offline APIs online or, asked
 * not to, refuses naming them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const example = (name: string) => readFileSync(new URL(`../../examples/accessories/${name}`, import.meta.url), 'utf8');
const logistics = example('logistics.yaml');
const financing = example('financing.yaml');
const product = example('accessories-product.yaml');
const partnersOnly = `product: 1.0.0
info: { name: partners, title: Partners, version: 1.0.0 }
visibility: { view: { type: custom, orgs: [partner-co] }, subscribe: { type: custom, orgs: [partner-co] } }
plans: { default: { title: Default } }
apis: { financing: { name: 'financing:1.0.0' } }
`;

const owner = (email: string) => ({ email, password: 'owner-pass-123' });

describe('issue-16: provider REST routes for consumer organizations, apps and subscriptions', () => {
  let t: TestPlatform;
  const orgPath = '/api/catalogs/sandbox/consumer-orgs/walker';
  let app: { id: string; clientId: string; clientSecret: string };
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    for (const [document, file] of [
      [logistics, 'logistics.yaml'],
      [financing, 'financing.yaml'],
    ]) {
      assert.equal((await t.call('POST', '/api/apis', { document, file })).status, 201);
    }
    for (const [document, file] of [
      [product, 'p.yaml'],
      [partnersOnly, 'q.yaml'],
    ]) {
      const published = await t.call('POST', '/api/catalogs/sandbox/products', {
        document,
        file,
        state: 'published',
      });
      assert.equal(published.status, 201);
    }
    const walker = { name: 'walker', title: 'Walker Shops', owner: owner('wanda@walker.example') };
    assert.equal((await t.call('POST', '/api/catalogs/sandbox/consumer-orgs', walker)).status, 201);
  });
  after(async () => {
    await t.close();
  });

  test('GET one consumer organization; an unknown one is a 404 naming it', async () => {
    const got = await t.call('GET', orgPath);
    assert.equal(got.status, 200);
    assert.equal(got.body.title, 'Walker Shops');
    assert.deepEqual(got.body.apps, []);
    const missing = await t.call('GET', '/api/catalogs/sandbox/consumer-orgs/nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.message, 'consumer organization nobody not found');
  });

  test('POST apps answers 201 with the client id and secret; GET shows the client id only', async () => {
    const created = await t.call('POST', `${orgPath}/apps`, {
      title: 'Walker Shop',
      description: 'the shop',
    });
    assert.equal(created.status, 201);
    app = created.body;
    assert.equal(created.body.consumerOrg, 'walker');
    assert.match(app.clientId, /^[0-9a-f]{32}$/);
    assert.ok(app.clientSecret.length >= 32);
    const got = await t.call('GET', `${orgPath}/apps/${app.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(
      got.body.credentials.map((c: { clientId: string }) => c.clientId),
      [app.clientId],
    );
    assert.ok(!JSON.stringify(got.body).includes(app.clientSecret));
    const list = await t.call('GET', `${orgPath}/apps`);
    assert.deepEqual(
      list.body.map((a: { id: string }) => a.id),
      [app.id],
    );
  });

  test('a bad app body is a 400 naming the field', async () => {
    const missing = await t.call('POST', `${orgPath}/apps`, { description: 'no title' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.field, 'title');
    const blank = await t.call('POST', `${orgPath}/apps`, { title: '  ' });
    assert.equal(blank.status, 400);
    assert.equal(blank.body.error.field, 'title');
  });

  test('subscribing to a plan needing approval gives a pending subscription the approval list shows', async () => {
    const gold = { product: 'accessories', version: '1.0.0', plan: 'gold' };
    const created = await t.call('POST', `${orgPath}/apps/${app.id}/subscriptions`, gold);
    assert.equal(created.status, 201);
    assert.equal(created.body.state, 'pending');
    assert.equal(created.body.plan_name, 'gold');
    assert.equal(created.body.consumer_org_name, 'walker');
    const pending = await t.call('GET', '/api/catalogs/sandbox/subscriptions?state=pending');
    assert.deepEqual(
      pending.body.map((s: { id: string }) => s.id),
      [created.body.id],
    );
    const approved = await t.call('POST', `/api/catalogs/sandbox/subscriptions/${created.body.id}/approve`);
    assert.equal(approved.body.state, 'active');
    const got = await t.call('GET', `/api/catalogs/sandbox/subscriptions/${created.body.id}`);
    assert.equal(got.body.state, 'active');
    assert.equal((await t.call('GET', '/api/catalogs/sandbox/subscriptions/nope')).status, 404);
  });

  test('subscription errors name the field and the reason', async () => {
    const path = `${orgPath}/apps/${app.id}/subscriptions`;
    const cases: Array<[Record<string, string>, number, string, RegExp]> = [
      [{ product: 'accessories', version: '1.0.0' }, 400, 'plan', /plan/],
      [{ product: 'accessories', version: '1.0.0', plan: 'platinum' }, 400, 'plan', /accessories has no plan platinum/],
      [{ product: 'nope', version: '1.0.0', plan: 'gold' }, 400, 'product', /catalog sandbox has no product nope:1/],
      [{ product: 'partners', version: '1.0.0', plan: 'default' }, 400, 'product', /not let consumer org\w* walker/],
    ];
    for (const [body, status, field, message] of cases) {
      const answer = await t.call('POST', path, body);
      assert.equal(answer.status, status, JSON.stringify(body));
      assert.equal(answer.body.error.field, field);
      assert.match(answer.body.error.message, message);
    }
    const twice = await t.call('POST', path, { product: 'accessories', version: '1.0.0', plan: 'silver' });
    assert.equal(twice.status, 409);
    assert.match(twice.body.error.message, /already subscribed to Accessories \(Gold, active\)/);
    const gold = { product: 'accessories', version: '1.0.0', plan: 'gold' };
    const unknownApp = await t.call('POST', `${orgPath}/apps/no-such-app/subscriptions`, gold);
    assert.equal(unknownApp.status, 404);
  });

  test("another organization's app is not reachable through this organization's path", async () => {
    await t.call('POST', '/api/catalogs/sandbox/consumer-orgs', {
      name: 'other',
      owner: owner('otto@other.example'),
    });
    assert.equal((await t.call('GET', `/api/catalogs/sandbox/consumer-orgs/other/apps/${app.id}`)).status, 404);
    assert.equal((await t.call('DELETE', `/api/catalogs/sandbox/consumer-orgs/other/apps/${app.id}`)).status, 404);
    assert.equal((await t.call('GET', `${orgPath}/apps/${app.id}`)).status, 200);
  });

  test('DELETE an app, then the organization: its owner can no longer sign in, nothing of it is left', async () => {
    const services = t.platform.consumerServices;
    const catalog = await t.platform.services.catalog(t.orgId, 'sandbox');
    const owned = await services.authenticatePortalUser(catalog.id, 'wanda@walker.example', 'owner-pass-123', 'test');
    const session = await services.sessions.create({ kind: 'portal', userId: owned.id, ttlMs: 60_000 });
    assert.ok(await services.sessions.find(session.token, ['portal']));
    const second = await t.call('POST', `${orgPath}/apps`, { title: 'Second' });
    assert.equal((await t.call('DELETE', `${orgPath}/apps/${second.body.id}`)).status, 204);
    assert.equal((await t.call('GET', `${orgPath}/apps/${second.body.id}`)).status, 404);
    assert.equal((await t.call('DELETE', orgPath)).status, 204);
    assert.equal((await t.call('GET', orgPath)).status, 404);
    assert.equal(await services.portalUserByEmail(catalog.id, 'wanda@walker.example'), undefined);
    assert.equal(await services.sessions.find(session.token, ['portal']), undefined);
    const apps = await t.call('GET', '/api/catalogs/sandbox/apps');
    assert.ok(!apps.body.some((a: { id: string }) => a.id === app.id));
    const subscriptions = await t.call('GET', '/api/catalogs/sandbox/subscriptions');
    assert.ok(!subscriptions.body.some((s: { consumer_org_name: string }) => s.consumer_org_name === 'walker'));
    assert.equal((await t.call('DELETE', orgPath)).status, 404);
  });
});

describe('issue-16: publishing a product brings its offline APIs online (API Connect), or refuses when asked', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    for (const [document, file] of [
      [logistics, 'logistics.yaml'],
      [financing, 'financing.yaml'],
    ]) {
      assert.equal((await t.call('POST', '/api/apis', { document, file })).status, 201);
    }
  });
  after(async () => {
    await t.close();
  });

  const states = async () => {
    const apis = (await t.call('GET', '/api/apis')).body as Array<{ name: string; state: string }>;
    return apis.map((a) => `${a.name}:${a.state}`).sort();
  };

  test('activate: false with offline APIs is a 409 naming them; nothing is stored', async () => {
    const body = { document: product, file: 'p.yaml', state: 'published', activate: false };
    const refused = await t.call('POST', '/api/catalogs/sandbox/products', body);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.field, 'activate');
    const offline = /^product accessories:1\.0\.0 uses offline APIs (logistics:2\.0\.0, fin|financing:1\.0\.0, log)/;
    assert.match(refused.body.error.message, offline);
    assert.equal((await t.call('GET', '/api/catalogs/sandbox/products')).body.length, 0);
    assert.deepEqual(await states(), ['financing:offline', 'logistics:offline']);
  });

  test('the lifecycle publish brings them online and answers which; ?activate=false refuses', async () => {
    const body = { document: product, file: 'p.yaml', state: 'staged' };
    const staged = await t.call('POST', '/api/catalogs/sandbox/products', body);
    assert.deepEqual(staged.body.activated, []);
    const refused = await t.call('POST', '/api/catalogs/sandbox/products/accessories/1.0.0/publish?activate=false');
    assert.equal(refused.status, 409);
    assert.match(refused.body.error.message, /uses offline APIs/);
    const published = await t.call('POST', '/api/catalogs/sandbox/products/accessories/1.0.0/publish');
    assert.equal(published.status, 200);
    assert.equal(published.body.state, 'published');
    assert.deepEqual(published.body.activated.sort(), ['financing:1.0.0', 'logistics:2.0.0']);
    assert.deepEqual(await states(), ['financing:online', 'logistics:online']);
  });

  test('publishing a published product again brings back an API taken offline since', async () => {
    assert.equal((await t.call('POST', '/api/apis/financing/1.0.0/deactivate')).body.state, 'offline');
    const body = { document: product, file: 'p.yaml', state: 'published' };
    const again = await t.call('POST', '/api/catalogs/sandbox/products', body);
    assert.equal(again.status, 200);
    assert.equal(again.body.changed, true);
    assert.deepEqual(again.body.activated, ['financing:1.0.0']);
    const unchanged = await t.call('POST', '/api/catalogs/sandbox/products', { ...body, activate: false });
    assert.equal(unchanged.body.changed, false);
    assert.deepEqual(unchanged.body.activated, []);
  });
});
