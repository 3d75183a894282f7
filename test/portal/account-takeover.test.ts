/**
 * Taking an account back over HTTP against the demo: a password change or a completed reset
 * cancels every outstanding reset link; the current-password check of the change form is limited
 * per account like sign-in; an account whose address is not verified creates no app; and a reset
 * of a never-verified account (someone else signed up with the owner's address) removes the apps,
 * secrets and redirect URIs made before it, in the store and at the gateway.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demo } from '../../src/cli/demo-scenario.ts';
import { resetLinkTtlMs } from '../../src/services/consumer/account-email.ts';
import { issueAccountToken } from '../../src/store/account-tokens.ts';
import * as consumers from '../../src/store/consumers.ts';
import { hashToken, newToken, now } from '../../src/store/secrets.ts';
import { defaultSignInLimits } from '../../src/web/sign-in-limiter.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { linkIn, mailTo, verificationLink } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
let counter = 0;
const password = 'takeover-pass-1';

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

function newEmail(tag: string): string {
  counter++;
  return `${tag}-${counter}-${process.pid}@example.org`;
}

async function catalogId(): Promise<string> {
  const db = running.handle.platform.store.db;
  return (await db.selectFrom('catalogs').select('id').where('name', '=', 'sandbox').executeTakeFirstOrThrow()).id;
}

async function userOf(email: string) {
  return (await running.handle.platform.consumerServices.portalUserByEmail(await catalogId(), email))!;
}

/** A verified account (as the provider or a verification link makes it), signed in. */
async function verifiedClient(email: string): Promise<WebClient> {
  await running.handle.platform.consumerServices.signUp(await catalogId(), { email, password, verified: true });
  const client = new WebClient(running.portal);
  assert.equal(await client.signIn(email, password), 303);
  return client;
}

/** "Forgot password?" for `email`; the reset link of the mail it sends (the `count`th such mail). */
async function resetLink(email: string, count: number): Promise<string> {
  const anonymous = new WebClient(running.portal);
  await anonymous.get('/forgot-password');
  assert.equal((await anonymous.post('/forgot-password', { email })).location, '/forgot-password?sent=1');
  const resets = () => mailTo(running.mail, email).filter((m) => /Reset your password/.test(m.subject));
  for (let i = 0; resets().length < count; i++) {
    if (i > 400) throw new Error(`reset mail ${count} to ${email} did not arrive`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return linkIn(resets().at(-1)!, '/reset-password?token=');
}

/** Whether a reset link still works: its form opens, and setting a password by it is refused as dead. */
async function resetLinkWorks(link: string): Promise<boolean> {
  const visitor = new WebClient(running.portal);
  const form = await visitor.openLink(link);
  if (form.status === 200) return true;
  assert.equal(form.status, 400);
  assert.match(form.text, /This link does not work/);
  const token = new URL(link).searchParams.get('token')!;
  await visitor.get('/forgot-password');
  const set = await visitor.post('/reset-password', { token, newPassword: 'by-old-link-9' });
  assert.equal(set.status, 400, 'and the password cannot be set by it');
  return false;
}

test('a password change on the account page cancels the reset link mailed before it', async () => {
  const email = newEmail('change');
  const owner = await verifiedClient(email);
  const link = await resetLink(email, 1);
  // The owner, who fears someone reads the mailbox, changes the password while signed in.
  await owner.get('/account');
  const changed = await owner.post('/account/password', { currentPassword: password, newPassword: 'changed-pass-2' });
  assert.equal(changed.location, '/account?changed=1');
  assert.equal(await resetLinkWorks(link), false, 'the mailed reset link no longer works');
  assert.equal(await new WebClient(running.portal).signIn(email, 'changed-pass-2'), 303, 'the changed password stands');
});

test('a completed reset cancels every other live reset link of the account', async () => {
  const email = newEmail('reset');
  await verifiedClient(email);
  const user = await userOf(email);
  const db = running.handle.platform.store.db;
  const used = await issueAccountToken(db, user.id, 'reset-password', resetLinkTtlMs);
  // Two "forgot password" requests that ran at once can each leave a link.
  const other = newToken();
  const row = { user_id: user.id, purpose: 'reset-password' as const, created_at: now() };
  await db
    .insertInto('account_tokens')
    .values({ ...row, token_hash: hashToken(other), expires_at: Date.now() + resetLinkTtlMs })
    .execute();
  const client = new WebClient(running.portal);
  await client.get(`/reset-password?token=${used}`);
  assert.equal((await client.post('/reset-password', { token: used, newPassword: 'reset-pass-3' })).status, 303);
  assert.equal(await resetLinkWorks(`${running.portal}/reset-password?token=${other}`), false);
});

test('30 parallel wrong current passwords on the change form: 5 are checked, the rest answer 429', async () => {
  const email = newEmail('guess');
  const thief = await verifiedClient(email);
  await thief.get('/account');
  const guesses = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      thief.post('/account/password', { currentPassword: `guess-${i}-pass`, newPassword: 'stolen-pass-4' }),
    ),
  );
  const statuses = guesses.map((g) => g.status).sort();
  const limit = defaultSignInLimits.max;
  assert.deepEqual(statuses, [...Array(limit).fill(400), ...Array(30 - limit).fill(429)]);
  const limited = guesses.find((g) => g.status === 429)!;
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.match(limited.text, /Too many wrong current passwords; try again in \d+ seconds/);
  // Limited means limited: the right password is not even checked now.
  const right = await thief.post('/account/password', { currentPassword: password, newPassword: 'stolen-pass-4' });
  assert.equal(right.status, 429);
  assert.equal(await new WebClient(running.portal).signIn(email, password), 303, 'the password is unchanged');
  // The limit is the account's: another account from the same address changes its password.
  const neighbour = newEmail('neighbour');
  const other = await verifiedClient(neighbour);
  await other.get('/account');
  const fine = await other.post('/account/password', { currentPassword: password, newPassword: 'neighbour-pass-5' });
  assert.equal(fine.location, '/account?changed=1');
});

/** Signs up over HTTP (the address unverified) and signs in. */
async function unverifiedClient(email: string, orgTitle: string): Promise<WebClient> {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  assert.equal((await client.post('/sign-up', { email, password, orgTitle })).status, 303);
  assert.equal(await client.signIn(email, password), 303);
  return client;
}

test('an account whose address is not verified creates no app, on the apps page or in the subscribe wizard', async () => {
  const email = newEmail('unverified');
  const client = await unverifiedClient(email, 'Unverified Org');
  await client.get('/apps/new');
  const refused = await client.post('/apps', { title: 'Early App' });
  assert.equal(refused.status, 403);
  assert.match(refused.text, /Verify your email address first: open the link we emailed you, then create your app/);
  const wizard = '/products/inventory/1.0.0/subscribe/app';
  await client.get(`${wizard}?plan=default`);
  const inWizard = await client.post(wizard, { plan: 'default', title: 'Wizard App' });
  assert.equal(inWizard.status, 403);
  assert.match(inWizard.text, /Verify your email address first/);
  const db = running.handle.platform.store.db;
  assert.deepEqual(await consumers.listApps(db, (await userOf(email)).consumer_org_id), []);

  assert.equal((await client.openLink(await verificationLink(running.mail, email))).status, 200);
  await client.get('/apps/new');
  assert.equal((await client.post('/apps', { title: 'Verified App' })).status, 303, 'verified, it creates apps');
});

/** A client credentials token request to the demo's native OAuth provider; its status. */
async function tokenStatus(clientId: string, clientSecret: string): Promise<number> {
  const answer = await fetch(`${running.gateway}/${demo.org}/${demo.catalog}/oauth/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=stock%3Aread',
  });
  await answer.arrayBuffer();
  return answer.status;
}

test('a reset of a never-verified account removes the apps, secrets and redirect URIs made before it', async () => {
  // Someone signs up with the owner's address. The app stands for one made before apps needed a
  // verified address (the portal's POST /apps called this same service then).
  const email = newEmail('owner');
  const intruder = await unverifiedClient(email, 'Intruder Org');
  const services = running.handle.platform.consumerServices;
  const orgId = (await userOf(email)).consumer_org_id;
  const { app, credential, clientSecret } = await services.createApp(orgId, { title: 'Intruder App' });
  await intruder.get(`/apps/${app.id}`);
  const uris = await intruder.post(`/apps/${app.id}/redirect-uris`, { redirect_uris: 'https://intruder.example/cb' });
  assert.equal(uris.status, 303);
  await running.handle.platform.gateway!.reload();
  assert.equal(await tokenStatus(credential.client_id, clientSecret), 200, 'the intruder holds a working client');

  // The owner of the mailbox takes the account over by "forgot password".
  const link = await resetLink(email, 1);
  const owner = new WebClient(running.portal);
  await owner.openLink(link);
  const token = new URL(link).searchParams.get('token')!;
  assert.equal((await owner.post('/reset-password', { token, newPassword: 'owner-pass-6' })).status, 303);

  const db = running.handle.platform.store.db;
  assert.deepEqual(await consumers.listApps(db, orgId), [], 'no app of the intruder is left');
  assert.deepEqual(await consumers.listCredentials(db, app.id), []);
  assert.notEqual((await userOf(email)).email_verified_at, null, 'the reset proved the mailbox');
  let status = 0;
  for (let i = 0; i < 200 && status !== 401; i++) {
    status = await tokenStatus(credential.client_id, clientSecret);
    if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.equal(status, 401, 'the gateway forgot the client without a manual reload');
  assert.equal(await owner.signIn(email, 'owner-pass-6'), 303);
  assert.match((await owner.get('/apps')).text, /No apps yet/);
});

test('a reset of a verified account keeps its apps', async () => {
  const email = newEmail('keeper');
  await verifiedClient(email);
  const orgId = (await userOf(email)).consumer_org_id;
  const { app } = await running.handle.platform.consumerServices.createApp(orgId, { title: 'Kept App' });
  const link = await resetLink(email, 1);
  const client = new WebClient(running.portal);
  await client.openLink(link);
  const token = new URL(link).searchParams.get('token')!;
  assert.equal((await client.post('/reset-password', { token, newPassword: 'keeper-pass-7' })).status, 303);
  const apps = await consumers.listApps(running.handle.platform.store.db, orgId);
  assert.deepEqual(
    apps.map((a) => a.id),
    [app.id],
  );
});
