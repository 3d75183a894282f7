/**
 * A plan's `apis:` list is enforced at the gateway: a subscription to a plan that lists only API
 * `a` of a product does not let its app call the product's API `b`; it gets exactly the answer
 * of an app with no subscription (so the answer is no oracle). A plan without `apis:` covers
 * every API of the product; a republished product's new list applies at the next reload.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { recordChange } from '../../src/store/changes.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import { clientIdScheme, clientSecretScheme, secApi } from '../helpers/security-api.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

interface Answer {
  status: number;
  body: string;
}

const served: Answer = { status: 200, body: 'served' };
const invalid: Answer = {
  status: 401,
  body: JSON.stringify({
    httpCode: '401',
    httpMessage: 'Unauthorized',
    moreInformation: 'Invalid client id or secret.',
  }),
};

const productText = (onlyA: string) => `product: 1.0.0
info: { name: two, title: Two, version: 1.0.0 }
plans:
  onlya: { title: Only A, apis: { ${onlyA} } }
  both: { title: Both }
apis: { a: { name: 'sec:1.0.0' }, b: { name: 'secb:1.0.0' } }
`;

interface App {
  clientId: string;
  clientSecret: string;
}

describe("a plan's apis list at the gateway", () => {
  let t: TestPlatform;
  let onlyA: App;
  let both: App;
  let none: App;
  const publish = async (onlyAApis: string) => {
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText(onlyAApis),
      file: 'two.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  };
  const get = async (path: string, app: App | string, secret = false): Promise<Answer> => {
    const clientId = typeof app === 'string' ? app : app.clientId;
    const headers: Record<string, string> = { 'X-IBM-Client-Id': clientId };
    if (secret && typeof app !== 'string') headers['X-IBM-Client-Secret'] = app.clientSecret;
    const response = await fetch(`${t.gateway}/acme/sandbox${path}?n=1`, { headers });
    return { status: response.status, body: await response.text() };
  };

  before(async () => {
    t = await startTestPlatform();
    const services = t.platform.services;
    const { sandbox } = await services.ensureOrg('acme');
    const a = secApi({
      schemes: { id: clientIdScheme, secret: clientSecretScheme },
      security: [{ id: [] }],
      operations: { '/thing': {}, '/owned': { security: [{ id: [], secret: [] }] } },
    });
    const b = structuredClone(a) as Record<string, Record<string, unknown>>;
    Object.assign(b, { basePath: '/secb' });
    Object.assign(b.info, { 'x-ibm-name': 'secb', title: 'SecB' });
    for (const [document, file] of [
      [a, 'a.json'],
      [b, 'b.json'],
    ] as const) {
      await services.importApi(t.orgId, { text: JSON.stringify(document), file, replace: true, state: 'online' });
    }
    await publish('a: {}');
    const product = await services.product(t.orgId, 'sandbox', 'two', '1.0.0');
    const newApp = async (title: string, plan?: string): Promise<App> => {
      const consumer = t.platform.consumerServices;
      await consumer.signUp(sandbox.id, { email: `${title}@example.com`, password: 'dev-pass-1234', orgTitle: title });
      const org = (await findConsumerOrgByName(services.store.db, sandbox.id, title))!;
      const { app, credential, clientSecret } = await consumer.createApp(org.id, { title: `App ${title}` });
      if (plan) await consumer.subscribe(org.id, { appId: app.id, productId: product.id, planName: plan });
      return { clientId: credential.client_id, clientSecret };
    };
    onlyA = await newApp('only-a', 'onlya');
    both = await newApp('both', 'both');
    none = await newApp('none');
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t.close();
  });

  test('a plan listing only a: served on a, refused on b with the unsubscribed answer', async () => {
    assert.deepEqual(await get('/sec/thing', onlyA), served);
    assert.deepEqual(await get('/secb/thing', onlyA), invalid);
    // The same answer as an app without a subscription and as an unknown client id.
    assert.deepEqual(await get('/secb/thing', none), invalid);
    assert.deepEqual(await get('/secb/thing', 'f'.repeat(32)), invalid);
  });

  test('a caller who proved ownership learns only "no subscription", as an unsubscribed one does', async () => {
    assert.deepEqual(await get('/sec/owned', onlyA, true), served);
    const refused = await get('/secb/owned', onlyA, true);
    const unsubscribed = await get('/secb/owned', none, true);
    assert.equal(refused.status, 401);
    assert.equal(
      refused.body.replace(onlyA.clientId, '<id>'),
      unsubscribed.body.replace(none.clientId, '<id>'),
      'the same refusal as an app without a subscription',
    );
    assert.match(JSON.parse(refused.body).moreInformation, /not subscribed to a plan that contains this API/);
  });

  test('a plan without apis covers every API of the product', async () => {
    assert.deepEqual(await get('/sec/thing', both), served);
    assert.deepEqual(await get('/secb/thing', both), served);
  });

  test("a republished product's new plan list applies at the next reload", async () => {
    await publish('b: {}');
    assert.deepEqual(await get('/sec/thing', onlyA), invalid);
    assert.deepEqual(await get('/secb/thing', onlyA), served);
    assert.deepEqual(await get('/sec/thing', both), served);
    await publish('a: {}');
    assert.deepEqual(await get('/sec/thing', onlyA), served);
    assert.deepEqual(await get('/secb/thing', onlyA), invalid);
  });

  // Found by a review (Session 15): a plan a republish dropped kept its row (its subscriptions'
  // history), was still listed in the portal and the management API, could be subscribed to, and
  // at the gateway covered every API of the product.
  test('a plan a republish dropped is offered no more, and a subscription naming it covers nothing', async () => {
    const services = t.platform.services;
    const consumer = t.platform.consumerServices;
    const text = (plans: string) =>
      `product: 1.0.0\ninfo: { name: three, title: Three, version: 1.0.0 }\nplans:\n${plans}apis: { a: { name: 'sec:1.0.0' } }\n`;
    const put = async (plans: string) => {
      await services.putProduct(t.orgId, 'sandbox', { text: text(plans), file: 'three.yaml', state: 'published' });
      await t.platform.gateway!.reload();
    };
    await put('  keep: { title: Keep }\n  gone: { title: Gone }\n');
    const product = await services.product(t.orgId, 'sandbox', 'three', '1.0.0');
    const { sandbox } = await services.ensureOrg('acme');
    await consumer.signUp(sandbox.id, { email: 'gone@example.com', password: 'dev-pass-1234', orgTitle: 'gone' });
    const org = (await findConsumerOrgByName(services.store.db, sandbox.id, 'gone'))!;
    const { app, credential } = await consumer.createApp(org.id, { title: 'App gone' });
    const subscription = await consumer.subscribe(org.id, { appId: app.id, productId: product.id, planName: 'gone' });
    await t.platform.gateway!.reload();
    assert.deepEqual(await get('/sec/thing', credential.client_id), served);

    await put('  keep: { title: Keep }\n');
    assert.deepEqual(
      (await services.productPlans(product.id)).map((plan) => plan.name),
      ['keep'],
    );
    assert.deepEqual(
      (await consumer.productPlans(product.id)).map((plan) => plan.name),
      ['keep'],
    );
    const { app: other } = await consumer.createApp(org.id, { title: 'Another' });
    await assert.rejects(
      consumer.subscribe(org.id, { appId: other.id, productId: product.id, planName: 'gone' }),
      /has no plan gone/,
    );
    // A subscription to it made before this was refused (the republish cancelled this one):
    // active again, it still lets its app call nothing.
    const db = services.store.db;
    await db.updateTable('subscriptions').set({ state: 'active' }).where('id', '=', subscription.id).execute();
    await recordChange(db, 'subscription', 'sqlite', product.id);
    await t.platform.gateway!.reload();
    assert.deepEqual(await get('/sec/thing', credential.client_id), invalid);
  });

  test('an entry with operations, stored before the import refused it, covers nothing (fail closed)', async () => {
    const db = t.platform.services.store.db;
    const product = await t.platform.services.product(t.orgId, 'sandbox', 'two', '1.0.0');
    const document = JSON.parse(product.document) as { plans: Record<string, Record<string, unknown>> };
    document.plans.onlya.apis = { a: { operations: [{ operationId: 'thing' }] }, b: {} };
    await db
      .updateTable('products')
      .set({ document: JSON.stringify(document), updated_at: new Date().toISOString() })
      .where('id', '=', product.id)
      .execute();
    await recordChange(db, 'product', 'sqlite', product.id);
    await t.platform.gateway!.reload();
    assert.deepEqual(await get('/sec/thing', onlyA), invalid);
    assert.deepEqual(await get('/secb/thing', onlyA), served);
  });
});
