/**
 * Issue 12, findings 12 and 13 (portal part), over HTTP against the demo platform: a
 * self-registered organization never takes a name a product's custom visibility lists (the
 * partner gets it from the provider instead), and sign-up answers the same whether or not
 * the email already has an account.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demo } from '../../src/cli/demo.ts';
import * as consumers from '../../src/store/consumers.ts';
import { findProduct } from '../../src/store/products.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
let catalogId: string;

const partnerProduct = `product: 1.0.0
info: {name: partner-only, title: Partner Only, version: 1.0.0}
visibility:
  view: {type: custom, orgs: [partner-co]}
  subscribe: {type: custom, orgs: [partner-co]}
plans: {default: {title: Default}}
apis: {logistics: {name: "logistics:2.0.0"}}
`;

before(async () => {
  running = await startPortalDemo();
  const { orgId, sandbox } = await running.handle.platform.services.ensureOrg(demo.org);
  catalogId = sandbox.id;
  const product = { text: partnerProduct, file: 'partner-only.yaml', state: 'published' as const };
  await running.handle.platform.services.putProduct(orgId, demo.catalog, product);
});

after(async () => {
  await running?.close();
});

async function signUp(email: string, orgTitle: string, password = 'accounts-pass-1') {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const started = performance.now();
  const answer = await client.post('/sign-up', { email, password, orgTitle });
  return { client, answer, ms: performance.now() - started };
}

async function providerToken(): Promise<string> {
  const answer = await fetch(`${running.management}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: demo.provider.username, password: demo.provider.password }),
  });
  return ((await answer.json()) as { token: string }).token;
}

test('issue-12: a stranger signing up as "Partner Co" gets another name, neither sees nor subscribes', async () => {
  const email = `stranger-${Date.now()}@example.org`;
  const { client, answer } = await signUp(email, 'Partner Co');
  assert.equal(answer.status, 303);
  const user = await consumers.findPortalUserByEmail(running.handle.platform.store.db, catalogId, email);
  const org = await consumers.findConsumerOrgById(running.handle.platform.store.db, user!.consumer_org_id);
  assert.equal(org?.title, 'Partner Co');
  assert.equal(org?.name, 'partner-co-2');
  assert.equal(await client.signIn(email, 'accounts-pass-1'), 303);
  assert.doesNotMatch((await client.get('/products')).text, /Partner Only/);
  assert.equal((await client.get('/products/partner-only/1.0.0')).status, 404);
  const product = await findProduct(running.handle.platform.store.db, catalogId, 'partner-only', '1.0.0');
  const { app } = await running.handle.platform.consumerServices.createApp(org!.id, {
    title: 'Stranger app',
  });
  const subscription = { appId: app.id, productId: product!.id, planName: 'default' };
  await assert.rejects(running.handle.platform.consumerServices.subscribe(org!.id, subscription), {
    code: 'MGMT_NOT_FOUND',
  });
});

test('issue-12: the provider creates the partner org by name; its owner signs in and sees the product', async () => {
  const token = await providerToken();
  const create = (body: unknown) =>
    fetch(`${running.management}/api/catalogs/sandbox/consumer-orgs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  const owner = { email: 'owner@partner.example', password: 'partner-pass-1', name: 'Pat Partner' };
  const created = await create({ name: 'partner-co', title: 'Partner Co', owner });
  assert.equal(created.status, 201);
  const body = (await created.json()) as { id: string };
  const stored = await consumers.findConsumerOrgByName(running.handle.platform.store.db, catalogId, 'partner-co');
  const ownerShown = { email: owner.email, name: owner.name };
  assert.deepEqual(body, { id: stored?.id, name: 'partner-co', title: 'Partner Co', owner: ownerShown });
  const again = await create({ name: 'partner-co', owner: { ...owner, email: 'other@partner.example' } });
  assert.equal(again.status, 409);
  const badName = await create({ name: 'Partner Co', owner: { ...owner, email: 'x@partner.example' } });
  assert.equal(badName.status, 400);
  assert.equal(((await badName.json()) as { error: { field: string } }).error.field, 'name');
  const partner = new WebClient(running.portal);
  assert.equal(await partner.signIn(owner.email, owner.password), 303);
  assert.match((await partner.get('/products')).text, /Partner Only/);
});

test('a self-registered org that took a name before a product listed it neither sees nor subscribes', async () => {
  const { services, consumerServices, store } = running.handle.platform;
  const email = `squatter-${Date.now()}@example.org`;
  const password = 'squatter-pass-1';
  await consumerServices.signUp(catalogId, { email, password, orgTitle: 'Later Partner', verified: true });
  const user = await consumers.findPortalUserByEmail(store.db, catalogId, email);
  const org = await consumers.findConsumerOrgById(store.db, user!.consumer_org_id);
  assert.equal(org?.name, 'later-partner', 'no product listed the name yet: the visitor got it');
  // The provider then publishes a product for its partner "later-partner".
  const { orgId } = await services.ensureOrg(demo.org);
  const text = partnerProduct.replaceAll('partner-only', 'later-only').replaceAll('partner-co', 'later-partner');
  await services.putProduct(orgId, demo.catalog, { text, file: 'later-only.yaml', state: 'published' });
  const client = new WebClient(running.portal);
  assert.equal(await client.signIn(email, password), 303);
  assert.doesNotMatch((await client.get('/products')).text, /later-only|Partner Only/);
  assert.equal((await client.get('/products/later-only/1.0.0')).status, 404);
  const product = await findProduct(store.db, catalogId, 'later-only', '1.0.0');
  const { app } = await consumerServices.createApp(org!.id, { title: 'Squatter app' });
  const subscription = { appId: app.id, productId: product!.id, planName: 'default' };
  await assert.rejects(consumerServices.subscribe(org!.id, subscription), { code: 'MGMT_NOT_FOUND' });
  // The provider is told why when it tries to subscribe the org itself.
  const ref = { orgId, catalog: demo.catalog, name: 'later-partner' };
  await assert.rejects(
    services.subscribeApp(ref, app.id, { product: 'later-only', version: '1.0.0', plan: 'default' }),
    {
      code: 'MGMT_VALIDATION',
      message: /registered itself on the portal/,
    },
  );
});

test('issue-12: sign-up answers the same for a taken email as for a new one, and signs nobody in', async () => {
  const fresh = await signUp(`fresh-${Date.now()}@example.org`, 'Fresh Org');
  const taken = await signUp(demo.developer.email, 'Whatever Org');
  for (const { answer, client } of [fresh, taken]) {
    assert.equal(answer.status, 303);
    assert.equal(answer.location, '/sign-in?registered=1');
    assert.equal(answer.text, '');
    assert.equal(client.cookies.has('portico_portal'), false, 'no session in either case');
  }
  const page = await fresh.client.get(fresh.answer.location);
  assert.match(
    page.text,
    /Thank you\. We sent a message to the address you gave: open its link to verify your email\. Sign in with your email and password to continue\./,
  );
  // The password is hashed either way: a taken email costs argon2 too (no fast path to time).
  const median = (values: number[]) => values.sort((a, b) => a - b)[1];
  const again = async (email: string) => (await signUp(email, 'Again')).ms;
  const takenMs = median([taken.ms, await again(demo.developer.email), await again(demo.developer.email)]);
  const freshMs = median([fresh.ms, await again(`f2-${Date.now()}@x.org`), await again(`f3-${Date.now()}@x.org`)]);
  assert.ok(takenMs > freshMs / 3, `taken ${takenMs.toFixed(1)} ms vs new ${freshMs.toFixed(1)} ms`);
  const db = running.handle.platform.store.db;
  const demoUser = await consumers.findPortalUserByEmail(db, catalogId, demo.developer.email);
  const demoOrg = await consumers.findConsumerOrgById(db, demoUser!.consumer_org_id);
  assert.equal(demoOrg?.title, demo.developer.org, 'the existing account is untouched');
});

test('sign-up refuses a multi-line or over-long name or organization title, and stores nothing', async () => {
  const db = running.handle.platform.store.db;
  const cases: Record<string, string>[] = [
    { name: 'Bob,\n\nYour account was locked: https://evil.example/unlock' },
    { name: 'x'.repeat(101) },
    { name: 'Bob\u0007' },
    { orgTitle: 'Org\r\nUnlock here: https://evil.example' },
    { orgTitle: 'o'.repeat(101) },
  ];
  for (const fields of cases) {
    const email = `refused-${Math.random().toString(36).slice(2)}@example.org`;
    const client = new WebClient(running.portal);
    await client.get('/sign-up');
    const answer = await client.post('/sign-up', { email, password: 'accounts-pass-1', ...fields });
    assert.equal(answer.status, 400, JSON.stringify(fields));
    assert.match(answer.text, /at most 100 characters on one line/);
    assert.equal(await consumers.findPortalUserByEmail(db, catalogId, email), undefined, 'nothing stored');
  }
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const email = `fine-${process.pid}@example.org`;
  const answer = await client.post('/sign-up', { email, password: 'accounts-pass-1', name: ` ${'n'.repeat(100)} ` });
  assert.equal(answer.status, 303);
  assert.equal((await consumers.findPortalUserByEmail(db, catalogId, email))?.name, 'n'.repeat(100));
});
