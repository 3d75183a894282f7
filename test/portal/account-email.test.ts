/**
 * Issue 16 item 5 over HTTP against the demo, whose portal sends account email through a real
 * SMTP sink (smtp-server) that the tests read: verification before authenticated products and
 * subscriptions, password reset by link, one-time and expiring links, neutral answers, limits.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demo } from '../../src/cli/demo.ts';
import * as consumers from '../../src/store/consumers.ts';
import { hashToken } from '../../src/store/secrets.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { linkIn, mailTo, verificationLink, waitForMail } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
let counter = 0;
const password = 'email-pass-1';

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

/** Signs up over HTTP and signs in, leaving the address unverified. */
async function signUpUnverified(email: string): Promise<WebClient> {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  assert.equal((await client.post('/sign-up', { email, password, orgTitle: `Org ${email}` })).status, 303);
  assert.equal(await client.signIn(email, password), 303);
  return client;
}

async function user(email: string) {
  const db = running.handle.platform.store.db;
  const catalogId = (
    await db.selectFrom('catalogs').select('id').where('name', '=', 'sandbox').executeTakeFirstOrThrow()
  ).id;
  return (await consumers.findPortalUserByEmail(db, catalogId, email))!;
}

async function resetLink(email: string, count: number): Promise<string> {
  const anonymous = new WebClient(running.portal);
  await anonymous.get('/forgot-password');
  assert.equal((await anonymous.post('/forgot-password', { email })).location, '/forgot-password?sent=1');
  for (
    let i = 0;
    mailTo(running.mail, email).filter((m) => /Reset your password/.test(m.subject)).length < count;
    i++
  ) {
    if (i > 400) throw new Error(`reset mail ${count} to ${email} did not arrive`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return linkIn(
    mailTo(running.mail, email)
      .filter((m) => /Reset your password/.test(m.subject))
      .at(-1)!,
    '/reset-password?token=',
  );
}

test('issue-16: an unverified account sees only public products and cannot subscribe; the emailed link lifts both', async () => {
  const email = newEmail('verify');
  const client = await signUpUnverified(email);
  const products = await client.get('/products');
  assert.match(products.text, /Check your email: open the link we sent to/);
  assert.match(products.text, /Inventory/);
  assert.doesNotMatch(products.text, /Accessories/, 'authenticated-only products stay hidden');
  assert.equal((await client.get('/products/accessories/1.0.0')).status, 404);

  const org = (await user(email)).consumer_org_id;
  const { app } = await running.handle.platform.consumerServices.createApp(org, { title: 'Unverified app' });
  await client.get(`/products/inventory/1.0.0/subscribe/review?plan=default&app=${app.id}`);
  const refused = await client.post('/products/inventory/1.0.0/subscribe', { plan: 'default', app: app.id });
  assert.equal(refused.status, 403);
  assert.match(refused.text, /Verify your email address first/);
  assert.deepEqual(await running.handle.platform.consumerServices.appSubscriptions(app.id), []);

  const link = await verificationLink(running.mail, email);
  assert.ok(link.startsWith(`${running.portal}/verify-email?token=`), link);
  const token = new URL(link).searchParams.get('token')!;
  assert.equal(Buffer.from(token, 'base64url').length, 32, 'a 256-bit token');
  const stored = await running.handle.platform.store.db.selectFrom('account_tokens').select('token_hash').execute();
  assert.ok(
    stored.some((row) => row.token_hash === hashToken(token)),
    'stored as its SHA-256',
  );
  assert.ok(!stored.some((row) => row.token_hash === token), 'never in clear');

  const verified = await client.openLink(link);
  assert.equal(verified.status, 200);
  assert.match(verified.text, /Email address verified/);
  assert.doesNotMatch(verified.text, /Check your email/);
  assert.match((await client.get('/products')).text, /Accessories/);
  await client.get(`/products/inventory/1.0.0/subscribe/review?plan=default&app=${app.id}`);
  assert.equal(
    (await client.post('/products/inventory/1.0.0/subscribe', { plan: 'default', app: app.id })).status,
    303,
  );

  const reused = await client.openLink(link);
  assert.equal(reused.status, 400, 'a verification link works once');
  assert.match(reused.text, /This link does not work/);
});

test('the verification mail does not carry the name typed at sign-up (the address is not verified yet)', async () => {
  const email = newEmail('noname');
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const name = 'Robert Unverified-Sender';
  assert.equal((await client.post('/sign-up', { email, password, name })).status, 303);
  const mail = await waitForMail(running.mail, email, /Verify your email/);
  assert.match(mail.text, /^Hello,\n/);
  assert.ok(!mail.text.includes('Robert'), mail.text);
});

test('the "someone tried to sign up" and password reset mails do not carry the name typed at sign-up either', async () => {
  const email = newEmail('typed-name');
  const name = 'Mallory Typed-Name';
  const first = new WebClient(running.portal);
  await first.get('/sign-up');
  assert.equal((await first.post('/sign-up', { email, password, name })).status, 303);
  const again = new WebClient(running.portal);
  await again.get('/sign-up');
  assert.equal((await again.post('/sign-up', { email, password, orgTitle: 'Again' })).status, 303);
  const warning = await waitForMail(running.mail, email, /Someone tried to sign up/);
  assert.match(warning.text, /^Hello,\n/);
  assert.ok(!warning.text.includes('Mallory'), warning.text);
  await resetLink(email, 1);
  const reset = mailTo(running.mail, email).find((m) => /Reset your password/.test(m.subject))!;
  assert.match(reset.text, /^Hello,\n/);
  assert.ok(!reset.text.includes('Mallory'), reset.text);
});

test('issue-16: sign-up with a taken email answers like a new one, and the owner is told by email', async () => {
  const fresh = new WebClient(running.portal);
  await fresh.get('/sign-up');
  const freshAnswer = await fresh.post('/sign-up', { email: newEmail('fresh'), password, orgTitle: 'Fresh' });
  const taken = new WebClient(running.portal);
  await taken.get('/sign-up');
  const takenAnswer = await taken.post('/sign-up', {
    email: demo.developer.email,
    password,
    orgTitle: 'Someone',
  });
  assert.deepEqual(
    [takenAnswer.status, takenAnswer.location, takenAnswer.text],
    [freshAnswer.status, freshAnswer.location, freshAnswer.text],
  );
  assert.equal(
    (await taken.get(takenAnswer.location)).text.replace(/name="_csrf" value="[^"]+"/, ''),
    (await fresh.get(freshAnswer.location)).text.replace(/name="_csrf" value="[^"]+"/, ''),
    'the same page',
  );
  const warning = await waitForMail(
    running.mail,
    demo.developer.email,
    /Someone tried to sign up with your email address/,
  );
  assert.match(warning.text, /already\s+has an account\. Nothing was changed\./);
  assert.ok(warning.text.includes(`${running.portal}/forgot-password`));
  assert.equal(
    mailTo(running.mail, demo.developer.email).filter((m) => /Verify/.test(m.subject)).length,
    0,
    'no verification link for a taken address',
  );
  assert.equal(await taken.signIn(demo.developer.email, password), 401, 'the attempt changed nothing');
});

test('issue-16: password reset by link: old password refused, new one works, every other session ended', async () => {
  const email = newEmail('reset');
  const first = await signUpUnverified(email);
  const second = new WebClient(running.portal);
  assert.equal(await second.signIn(email, password), 303);
  assert.equal((await second.get('/apps')).status, 200);

  const link = await resetLink(email, 1);
  assert.ok(link.startsWith(`${running.portal}/reset-password?token=`), link);
  const form = await first.openLink(link);
  assert.equal(form.status, 200);
  assert.match(form.text, /Choose a new password/);
  const token = new URL(link).searchParams.get('token')!;
  const weak = await first.post('/reset-password', { token, newPassword: 'short' });
  assert.equal(weak.status, 400, 'the same password rules as sign-up');
  assert.match(weak.text, /at least 10 characters/);
  const done = await first.post('/reset-password', { token, newPassword: 'brand-new-pass-2' });
  assert.equal(done.status, 303);
  assert.equal(done.location, '/sign-in?reset=1');

  for (const client of [first, second]) {
    const answer = await client.get('/apps');
    assert.equal(answer.status, 303, 'every session of the account ended');
    assert.match(answer.location, /^\/sign-in/);
  }
  const sessions = await running.handle.platform.store.db
    .selectFrom('sessions')
    .select('id')
    .where('user_id', '=', (await user(email)).id)
    .execute();
  assert.deepEqual(sessions, []);
  assert.equal(await new WebClient(running.portal).signIn(email, password), 401, 'the old password is refused');
  assert.equal(await new WebClient(running.portal).signIn(email, 'brand-new-pass-2'), 303, 'the new one works');
  assert.ok((await user(email)).email_verified_at, 'reading the link proved the mailbox');

  const again = await new WebClient(running.portal).openLink(link);
  assert.equal(again.status, 400, 'a reset link works once');
  const replay = new WebClient(running.portal);
  await replay.get('/forgot-password');
  const replayed = await replay.post('/reset-password', { token, newPassword: 'third-pass-33' });
  assert.equal(replayed.status, 400);
  assert.equal(await new WebClient(running.portal).signIn(email, 'third-pass-33'), 401);
});

test('issue-16: expired links and all but the latest reset link are refused', async () => {
  const email = newEmail('expired');
  const client = await signUpUnverified(email);
  const verify = await verificationLink(running.mail, email);
  const db = running.handle.platform.store.db;
  const expire = (token: string) =>
    db
      .updateTable('account_tokens')
      .set({ expires_at: Date.now() - 1 })
      .where('token_hash', '=', hashToken(token))
      .execute();
  await expire(new URL(verify).searchParams.get('token')!);
  assert.equal((await client.openLink(verify)).status, 400, 'an expired verification link');
  assert.equal((await user(email)).email_verified_at, null);

  const older = await resetLink(email, 1);
  const latest = await resetLink(email, 2);
  assert.equal((await client.openLink(older)).status, 400, 'a newer link replaces the older one');
  assert.equal((await client.openLink(latest)).status, 200);
  await expire(new URL(latest).searchParams.get('token')!);
  assert.equal((await client.openLink(latest)).status, 400, 'an expired reset link');
  await client.get('/forgot-password');
  const token = new URL(latest).searchParams.get('token')!;
  assert.equal((await client.post('/reset-password', { token, newPassword: 'never-set-pass-4' })).status, 400);
});

test('issue-16: "forgot password" answers the same for an unknown address and sends nothing', async () => {
  const known = newEmail('known');
  await signUpUnverified(known);
  const unknown = newEmail('nobody');
  const answers = [];
  for (const email of [known, unknown]) {
    const client = new WebClient(running.portal);
    await client.get('/forgot-password');
    const answer = await client.post('/forgot-password', { email });
    answers.push([answer.status, answer.location, answer.text]);
  }
  assert.deepEqual(answers[0], answers[1]);
  await waitForMail(running.mail, known, /Reset your password/);
  assert.deepEqual(mailTo(running.mail, unknown), []);
});

test('issue-16: links point at the portal itself, never at a Host header the request made up', async () => {
  const email = newEmail('host');
  await signUpUnverified(email);
  const client = new WebClient(running.portal);
  await client.get('/forgot-password');
  await client.request('POST', '/forgot-password', { _csrf: client.csrf, email }, { host: 'evil.example' });
  const message = await waitForMail(running.mail, email, /Reset your password/);
  assert.ok(linkIn(message, '/reset-password?token=').startsWith(`${running.portal}/`));
  assert.doesNotMatch(message.text, /evil\.example/);
});

test('issue-16: asking for the verification link again is limited to 3 emails per address in 15 minutes', async () => {
  const email = newEmail('resend');
  const client = await signUpUnverified(email);
  await verificationLink(running.mail, email);
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    await client.get('/account');
    const answer = await client.post('/account/verification');
    statuses.push(answer.status);
    if (answer.status === 429) assert.ok(Number(answer.headers.get('retry-after')) > 0);
  }
  assert.deepEqual(statuses, [303, 303, 429], 'sign-up sent one, two more, then refused');
  await waitForMail(running.mail, email, /Verify/);
  for (let i = 0; mailTo(running.mail, email).length < 3 && i < 400; i++)
    await new Promise((resolve) => setTimeout(resolve, 25));
  assert.equal(mailTo(running.mail, email).length, 3);
  const links = mailTo(running.mail, email).map((m) => linkIn(m, '/verify-email?token='));
  assert.equal((await client.openLink(links[0])).status, 400, 'only the latest link works');
  assert.equal((await client.openLink(links[2])).status, 200);
});
