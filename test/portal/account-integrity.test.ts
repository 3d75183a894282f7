/**
 * Account integrity over HTTP against the demo: what a sign-up answer tells about an address,
 * and whether a session started with the old password can outlive a password reset.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { resetLinkTtlMs } from '../../src/services/consumer/account-email.ts';
import { issueAccountToken } from '../../src/store/account-tokens.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { verificationLink } from '../helpers/mail.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
let counter = 0;
const password = 'integrity-pass-1';

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

async function signUpAnswer(form: Record<string, string>) {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const answer = await client.post('/sign-up', { password, ...form });
  const error = /class="notice[^"]*error[^"]*"[^>]*>([\s\S]*?)<\//.exec(answer.text)?.[1]?.trim();
  return { status: answer.status, location: answer.location, error };
}

test('a sign-up with a name too long answers the same for a taken address and a new one', async () => {
  const taken = newEmail('taken');
  assert.equal((await signUpAnswer({ email: taken })).status, 303);
  for (const field of ['name', 'orgTitle']) {
    for (const value of ['x'.repeat(101), 'line\nbreak']) {
      const forTaken = await signUpAnswer({ email: taken, [field]: value });
      const forNew = await signUpAnswer({ email: newEmail('fresh'), [field]: value });
      assert.deepEqual(forTaken, forNew, `${field} ${JSON.stringify(value.slice(0, 12))}: the answer names no account`);
      assert.equal(forNew.status, 400);
    }
  }
});

/** Whether the client's session cookie still opens the account page. */
async function stillSignedIn(client: WebClient): Promise<boolean> {
  return (await client.get('/account')).status === 200;
}

/** Five sign-ins with the old password, `stepMs` apart from the start of `change`; the ones whose session still works. */
async function raceSignIns(email: string, change: () => Promise<unknown>, stepMs: number): Promise<number[]> {
  const attackers = await Promise.all(
    [0, 1, 2, 3, 4].map(async () => {
      const client = new WebClient(running.portal);
      await client.get('/sign-in');
      return client;
    }),
  );
  const changed = change();
  const signIns = attackers.map(async (client, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * stepMs));
    return client.post('/sign-in', { email, password, next: '/' });
  });
  await changed;
  await Promise.all(signIns);
  const survivors: number[] = [];
  for (const [i, client] of attackers.entries()) if (await stillSignedIn(client)) survivors.push(i);
  return survivors;
}

test('a sign-in with the old password racing a password reset never leaves a working session', async () => {
  const services = running.handle.platform.consumerServices;
  const survivors: string[] = [];
  for (let trial = 0; trial < 3; trial++) {
    const email = newEmail('race');
    const { user } = await services.signUp(await catalogId(), { email, password, verified: true });
    const token = await issueAccountToken(running.handle.platform.store.db, user.id, 'reset-password', resetLinkTtlMs);
    const owner = new WebClient(running.portal);
    await owner.get(`/reset-password?token=${token}`);
    // The reset hashes the new password (one argon2 run) before storing it: sign-ins started
    // meanwhile read the old hash, and some finish after the reset ended the sessions.
    const reset = async () =>
      assert.equal(
        (await owner.post('/reset-password', { token, newPassword: `changed-pass-${trial}` })).location,
        '/sign-in?reset=1',
      );
    survivors.push(...(await raceSignIns(email, reset, 12)).map((i) => `${trial}.${i}`));
    const fresh = new WebClient(running.portal);
    assert.equal(await fresh.signIn(email, `changed-pass-${trial}`), 303, 'the new password works');
    assert.ok(await stillSignedIn(fresh));
  }
  assert.deepEqual(survivors, [], 'no session made with the old password works after the reset');
});

test('a sign-in with the old password racing a password change never leaves a working session', async () => {
  const services = running.handle.platform.consumerServices;
  const survivors: string[] = [];
  for (let trial = 0; trial < 3; trial++) {
    const email = newEmail('change');
    await services.signUp(await catalogId(), { email, password, verified: true });
    const owner = new WebClient(running.portal);
    assert.equal(await owner.signIn(email, password), 303);
    await owner.get('/account');
    // Checking the current password and hashing the new one take two argon2 runs.
    const change = async () =>
      assert.equal(
        (await owner.post('/account/password', { currentPassword: password, newPassword: `changed-pass-${trial}` }))
          .location,
        '/account?changed=1',
      );
    survivors.push(...(await raceSignIns(email, change, 20)).map((i) => `${trial}.${i}`));
    assert.ok(await stillSignedIn(owner), 'the browser that changed it stays signed in');
  }
  assert.deepEqual(survivors, [], 'no session made with the old password works after the change');
});

async function emailVerifiedAt(email: string) {
  return (await running.handle.platform.consumerServices.portalUserByEmail(await catalogId(), email))
    ?.email_verified_at;
}

test('a verification link opened without the account (a mail scanner, a link preview) verifies nothing', async () => {
  // Someone signs up with an address they do not own; its owner's mail system fetches the link.
  const email = newEmail('claimed');
  const claimant = new WebClient(running.portal);
  await claimant.get('/sign-up');
  assert.equal((await claimant.post('/sign-up', { email, password })).status, 303);
  assert.equal(await claimant.signIn(email, password), 303);
  const link = await verificationLink(running.mail, email);

  const scanner = await new WebClient(running.portal).openLink(link);
  assert.equal(scanner.status, 303);
  assert.equal(scanner.location, `/sign-in?next=${encodeURIComponent(new URL(link).pathname + new URL(link).search)}`);
  const other = new WebClient(running.portal);
  const otherEmail = newEmail('other');
  await other.get('/sign-up');
  await other.post('/sign-up', { email: otherEmail, password });
  assert.equal(await other.signIn(otherEmail, password), 303);
  const wrongAccount = await other.openLink(link);
  assert.equal(wrongAccount.status, 403);
  assert.match(wrongAccount.text, /signed in with another account/);
  assert.equal(await emailVerifiedAt(email), null, 'still unverified');
  assert.equal(await emailVerifiedAt(otherEmail), null, 'and so is the other account');

  // The link still works where the account's password is known: after signing in, it comes back.
  const owner = new WebClient(running.portal);
  const signInPage = await owner.get(scanner.location);
  assert.match(signInPage.text, /Sign in with the account this link was sent for/);
  const signedIn = await owner.post('/sign-in', {
    email,
    password,
    next: new URL(link).pathname + new URL(link).search,
  });
  assert.equal(signedIn.status, 303);
  const verified = await owner.get(signedIn.location);
  assert.match(verified.text, /Email address verified/);
  assert.notEqual(await emailVerifiedAt(email), null);
});
