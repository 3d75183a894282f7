/**
 * Portal and console security over real HTTP against the demo platform: sign-out ends the
 * session on the server, CSRF tokens are required on every state change, one organization
 * cannot reach another's apps or subscriptions, sign-in attempts are rate limited, output is
 * escaped, and pages carry a strict Content-Security-Policy.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demo } from '../../src/cli/demo.ts';
import * as consumers from '../../src/store/consumers.ts';
import { findProduct } from '../../src/store/products.ts';
import { hashToken } from '../../src/store/secrets.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { verificationLink } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;

async function signUp(email: string, orgTitle: string): Promise<WebClient> {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const answer = await client.post('/sign-up', { email, password: 'security-pass-1', orgTitle });
  assert.equal(answer.status, 303);
  assert.equal(await client.signIn(email, 'security-pass-1'), 303);
  assert.equal((await client.openLink(await verificationLink(running.mail, email))).status, 200);
  return client;
}

async function appIdsOf(email: string): Promise<string[]> {
  const db = running.handle.platform.store.db;
  const catalogId = (
    await db.selectFrom('catalogs').select('id').where('name', '=', 'sandbox').executeTakeFirstOrThrow()
  ).id;
  const user = await consumers.findPortalUserByEmail(db, catalogId, email);
  return (await consumers.listApps(db, user!.consumer_org_id)).map((a) => a.id);
}

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

test('signing out deletes the session on the server: the old cookie no longer works', async () => {
  const client = new WebClient(running.portal);
  assert.equal(await client.signIn(demo.developer.email, demo.developer.password), 303);
  const cookie = client.cookies.get('portico_portal');
  assert.ok(cookie);
  assert.equal((await client.get('/apps')).status, 200);
  const out = await client.post('/sign-out');
  assert.equal(out.status, 303);
  assert.equal(client.cookies.has('portico_portal'), false, 'the cookie is cleared');
  const replay = new WebClient(running.portal);
  replay.cookies.set('portico_portal', cookie);
  const answer = await replay.get('/apps');
  assert.equal(answer.status, 303);
  assert.match(answer.location, /^\/sign-in\?next=/);
  const row = await running.handle.platform.store.db
    .selectFrom('sessions')
    .select('id')
    .where('id', '=', hashToken(cookie))
    .executeTakeFirst();
  assert.equal(row, undefined, 'the session row is gone');
});

test('a POST without or with a wrong CSRF token is refused with 403 and changes nothing', async () => {
  const client = await signUp(`csrf-${Date.now()}@example.org`, 'Csrf Org');
  await client.get('/apps/new');
  const missing = await client.post('/apps', { title: 'Sneaky' }, false);
  assert.equal(missing.status, 403);
  assert.match(missing.text, /Missing or invalid CSRF token/);
  const wrong = await client.request('POST', '/apps', { _csrf: 'x'.repeat(43), title: 'Sneaky' });
  assert.equal(wrong.status, 403);
  const header = await client.request('POST', '/apps', { title: 'Sneaky' }, { 'x-csrf-token': 'not-the-token' });
  assert.equal(header.status, 403);
  const apps = await client.get('/apps');
  assert.doesNotMatch(apps.text, /Sneaky/);
  const good = await client.post('/apps', { title: 'Honest' });
  assert.equal(good.status, 303);
});

test('sign-in and sign-out forms need the token too (login CSRF)', async () => {
  const client = new WebClient(running.portal);
  const answer = await client.post(
    '/sign-in',
    { email: demo.developer.email, password: demo.developer.password },
    false,
  );
  assert.equal(answer.status, 403);
  assert.equal(client.cookies.has('portico_portal'), false);
});

test('issue-12: a pre-session cookie the client made up, echoed in the form, is refused with 403', async () => {
  const forged = 'f'.repeat(43);
  const developer = { email: demo.developer.email, password: demo.developer.password };
  const newcomer = { email: `forged-${Date.now()}@example.org`, password: 'security-pass-1' };
  const provider = { username: demo.provider.username, password: demo.provider.password };
  const targets: Array<{ base: string; path: string; cookie: string; fields: Record<string, string> }> = [
    { base: running.portal, path: '/sign-in', cookie: 'portico_portal_pre', fields: developer },
    { base: running.portal, path: '/sign-up', cookie: 'portico_portal_pre', fields: newcomer },
    { base: running.management, path: '/console/sign-in', cookie: 'portico_console_pre', fields: provider },
  ];
  for (const target of targets) {
    const client = new WebClient(target.base);
    client.cookies.set(target.cookie, forged);
    const answer = await client.request('POST', target.path, { _csrf: forged, ...target.fields });
    assert.equal(answer.status, 403, target.path);
    assert.match(answer.text, /Missing or invalid CSRF token/);
    assert.notEqual(client.cookies.get(target.cookie), forged, `${target.path}: the server issues its own pre-session`);
    assert.equal(client.cookies.has('portico_portal') || client.cookies.has('portico_console'), false, 'no session');
  }
});

test("issue-12: the pre-session's token is not its cookie: the cookie echoed as the token is refused", async () => {
  const client = new WebClient(running.portal);
  await client.get('/sign-in');
  const cookie = client.cookies.get('portico_portal_pre')!;
  assert.notEqual(client.csrf, cookie);
  const fields = { _csrf: cookie, email: demo.developer.email, password: demo.developer.password };
  const answer = await client.request('POST', '/sign-in', fields);
  assert.equal(answer.status, 403);
  const signedIn = await client.post('/sign-in', {
    email: demo.developer.email,
    password: demo.developer.password,
  });
  assert.equal(signedIn.status, 303, 'the token the server issued works');
  assert.equal(client.cookies.has('portico_portal_pre'), false, 'signing in ends the pre-session');
});

test('the console refuses an approval without the CSRF token', async () => {
  const client = new WebClient(running.management);
  await client.get('/console/sign-in');
  const signIn = await client.post('/console/sign-in', {
    username: demo.provider.username,
    password: demo.provider.password,
  });
  assert.equal(signIn.status, 303);
  await client.get('/console/approvals');
  const answer = await client.post('/console/catalogs/sandbox/subscriptions/whatever/approve', {}, false);
  assert.equal(answer.status, 403);
  const unknown = await client.post('/console/catalogs/sandbox/subscriptions/whatever/approve');
  assert.equal(unknown.status, 404);
});

test("another organization's app and subscription ids answer 404 and stay untouched", async () => {
  const emailA = `org-a-${Date.now()}@example.org`;
  const a = await signUp(emailA, 'Org A');
  const b = await signUp(`org-b-${Date.now()}@example.org`, 'Org B');
  await a.get('/apps/new');
  assert.equal((await a.post('/apps', { title: 'A private app' })).status, 303);
  const [appId] = await appIdsOf(emailA);
  const db = running.handle.platform.store.db;
  const catalog = await db.selectFrom('catalogs').select('id').where('name', '=', 'sandbox').executeTakeFirstOrThrow();
  const inventory = await findProduct(db, catalog.id, 'inventory', '1.0.0');
  const app = await consumers.findAppById(db, appId);
  const subscription = await running.handle.platform.consumerServices.subscribe(app!.consumer_org_id, {
    appId,
    productId: inventory!.id,
    planName: 'default',
  });

  await b.get('/apps');
  for (const path of [
    `/apps/${appId}`,
    `/apps/${appId}/delete`,
    `/subscriptions/${subscription.id}`,
    `/products/inventory/1.0.0/subscribe/review?plan=default&app=${appId}`,
  ]) {
    assert.equal((await b.get(path)).status, 404, `GET ${path}`);
  }
  for (const path of [
    `/apps/${appId}/delete`,
    `/apps/${appId}/credentials`,
    `/subscriptions/${subscription.id}/cancel`,
  ]) {
    assert.equal((await b.post(path)).status, 404, `POST ${path}`);
  }
  const tryIt = await b.post('/products/inventory/1.0.0/apis/inventory/1.0.0/try', {
    operation: 'get-items',
    app: appId,
  });
  assert.equal(tryIt.status, 404);
  assert.ok(await consumers.findAppById(db, appId), 'the app still exists');
  assert.equal((await consumers.findSubscriptionById(db, subscription.id))?.state, 'active');
  assert.equal((await a.get(`/apps/${appId}`)).status, 200, 'its owner still reaches it');
});

test('sign-in attempts are limited per address and email: the sixth failure answers 429', async () => {
  const client = new WebClient(running.portal);
  await client.get('/sign-in');
  for (let i = 0; i < 5; i++) {
    const answer = await client.post('/sign-in', {
      email: demo.developer.email,
      password: `wrong-password-${i}`,
    });
    assert.equal(answer.status, 401);
    assert.match(answer.text, /Wrong email or password\./);
  }
  const blocked = await client.post('/sign-in', {
    email: demo.developer.email,
    password: demo.developer.password,
  });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  const unknown = await client.post('/sign-in', { email: 'nobody@example.org', password: 'whatever-1234' });
  assert.equal(unknown.status, 401, 'other emails are counted apart');
  assert.match(unknown.text, /Wrong email or password\./, 'the same words for an unknown email');
});

test('what a developer types is escaped on every page', async () => {
  const client = await signUp(`xss-${Date.now()}@example.org`, '<script>alert(1)</script> Org');
  await client.get('/apps/new');
  const posted = await client.post('/apps', {
    title: '<img src=x onerror=alert(1)>',
    description: '"quoted" & <b>bold</b>',
  });
  assert.equal(posted.status, 303);
  const created = await client.get(posted.location);
  assert.doesNotMatch(created.text, /<img src=x/);
  assert.match(created.text, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.match(created.text, /&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;\/b&gt;/);
  const account = await client.get('/account');
  assert.match(account.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; Org/);
});

test('pages carry a strict Content-Security-Policy and session cookies are HttpOnly and SameSite=Lax', async () => {
  const email = `cookie-${Date.now()}@example.org`;
  await signUp(email, 'Cookie Org');
  const client = new WebClient(running.portal);
  const page = await fetch(`${running.portal}/`);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  await client.get('/sign-in');
  const answer = await fetch(`${running.portal}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: `portico_portal_pre=${client.cookies.get('portico_portal_pre')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ _csrf: client.csrf, email, password: 'security-pass-1' }).toString(),
  });
  const cookie = answer.headers.getSetCookie().find((c) => c.startsWith('portico_portal='));
  assert.match(cookie ?? '', /HttpOnly/);
  assert.match(cookie ?? '', /SameSite=Lax/);
  assert.match(cookie ?? '', /Path=\//);
  assert.doesNotMatch(cookie ?? '', /Secure/, 'plain http here; Secure is set behind https');
});
