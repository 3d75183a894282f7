/**
 * Issue 16 over HTTP: every portal POST that creates or changes something answers 303; the
 * secret it issues is shown once by the page it redirects to, from the server-side session,
 * never in a URL; the wizard's app creation keeps the product and plan in the session. The
 * redirect is followed as a browser does, with `Sec-Fetch-Site: same-origin` (see
 * secret-display.test.ts for the navigations that may not show the secret).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as consumers from '../../src/store/consumers.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { verificationLink } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;

async function signUp(email: string, orgTitle: string): Promise<WebClient> {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  assert.equal((await client.post('/sign-up', { email, password: 'prg-password-1', orgTitle })).status, 303);
  assert.equal(await client.signIn(email, 'prg-password-1'), 303);
  assert.equal((await client.openLink(await verificationLink(running.mail, email))).status, 200);
  return client;
}

async function appsOf(email: string) {
  const db = running.handle.platform.store.db;
  const catalogId = (
    await db.selectFrom('catalogs').select('id').where('name', '=', 'sandbox').executeTakeFirstOrThrow()
  ).id;
  const user = await consumers.findPortalUserByEmail(db, catalogId, email);
  return consumers.listApps(db, user!.consumer_org_id);
}

const secretField = /id="client-secret" value="([^"]+)"/;

/** Follows a redirect the way a browser does after one of the portal's own forms. */
const follow = (client: WebClient, location: string) =>
  client.request('GET', location, undefined, { 'sec-fetch-site': 'same-origin' });

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

test('issue-16: POST /apps answers 303 to the app; its page shows the secret once; reloading creates no second app', async () => {
  const email = `prg-${Date.now()}@example.org`;
  const client = await signUp(email, 'PRG Org');
  await client.get('/apps/new');
  const posted = await client.post('/apps', { title: 'Reload Shop' });
  assert.equal(posted.status, 303);
  const [app] = await appsOf(email);
  assert.equal(posted.location, `/apps/${app.id}`);
  const first = await follow(client, posted.location);
  const secret = secretField.exec(first.text)?.[1] ?? '';
  assert.ok(secret.length >= 20, 'the secret is on the page the POST led to');
  assert.ok(!posted.location.includes(secret));
  const again = await follow(client, posted.location);
  assert.doesNotMatch(again.text, secretField, 'a reload shows the secret no more');
  assert.equal((await appsOf(email)).length, 1);
});

test('issue-16: adding credentials and resetting a secret answer 303; the new secret shows once', async () => {
  const email = `prg-cred-${Date.now()}@example.org`;
  const client = await signUp(email, 'PRG Cred Org');
  await client.get('/apps/new');
  const created = await client.post('/apps', { title: 'Cred Shop' });
  await client.get(created.location);
  const added = await client.post(`${created.location}/credentials`);
  assert.equal(added.status, 303);
  assert.equal(added.location, created.location);
  const page = await follow(client, added.location);
  assert.match(page.text, /New credentials added/);
  const [app] = await appsOf(email);
  const credentials = await consumers.listCredentials(running.handle.platform.store.db, app.id);
  assert.equal(credentials.length, 2);
  const reset = await client.post(`${created.location}/credentials/${encodeURIComponent(credentials[0].id)}/reset`);
  assert.equal(reset.status, 303);
  assert.match((await follow(client, reset.location)).text, /New client secret/);
  assert.doesNotMatch((await follow(client, reset.location)).text, secretField);
  assert.equal((await consumers.listCredentials(running.handle.platform.store.db, app.id)).length, 2);
});

test('issue-16: an app created inside the wizard continues to the review from the session, not the URL', async () => {
  const email = `prg-wizard-${Date.now()}@example.org`;
  const client = await signUp(email, 'PRG Wizard Org');
  const start = await client.get('/products/accessories/1.0.0/subscribe?plan=silver');
  assert.match(
    start.text,
    /action="\/products\/accessories\/1\.0\.0\/subscribe\/app"/,
    'the wizard offers to create the app',
  );
  const posted = await client.post('/products/accessories/1.0.0/subscribe/app', {
    plan: 'silver',
    title: 'Wizard Shop',
  });
  assert.equal(posted.status, 303);
  assert.equal(posted.location, '/products/accessories/1.0.0/subscribe/review');
  const review = await follow(client, posted.location);
  assert.equal(review.status, 200);
  assert.match(review.text, /Wizard Shop/);
  assert.match(review.text, /<dd>Silver<\/dd>/);
  assert.match(review.text, secretField);
  const unknownPlan = await client.post('/products/accessories/1.0.0/subscribe/app', {
    plan: 'platinum',
    title: 'Nope',
  });
  assert.equal(unknownPlan.status, 404);
  assert.equal((await appsOf(email)).length, 1, 'no app for a plan that does not exist');
});
