/**
 * Pre-sessions are stateless: an anonymous visitor's sign-in and sign-up forms carry a login-CSRF
 * token derived from a cookie the server signed, so anonymous traffic writes nothing to the
 * store. A cookie the server did not sign for this kind, or signed more than 2 hours ago, is
 * treated as absent: a fresh one is issued and the token derived from the old one is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { demo } from '../../src/cli/demo.ts';
import { serverKey } from '../../src/store/server-keys.ts';
import { issuePreSession, preSessionCsrfToken, preSessionTtlMs } from '../../src/web/pre-session.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;

const developer = { email: demo.developer.email, password: demo.developer.password };
const provider = { username: demo.provider.username, password: demo.provider.password };

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

async function sessionRows(): Promise<number> {
  const db = running.handle.platform.store.db;
  const row = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('50 anonymous GETs of the portal and console sign-in pages leave the sessions table as it was', async () => {
  const before = await sessionRows();
  for (let i = 0; i < 25; i++) {
    const portal = await fetch(`${running.portal}/sign-in`);
    assert.equal(portal.status, 200);
    assert.match(portal.headers.getSetCookie().join('\n'), /portico_portal_pre=/, 'a pre-session cookie is issued');
    await portal.text();
    const console = await fetch(`${running.management}/console/sign-in`);
    assert.equal(console.status, 200);
    assert.match(console.headers.getSetCookie().join('\n'), /portico_console_pre=/);
    await console.text();
  }
  assert.equal(await sessionRows(), before);
});

test('a console pre-session cookie presented to the portal is replaced, and its token is refused with 403', async () => {
  const consoleClient = new WebClient(running.management);
  await consoleClient.get('/console/sign-in');
  const consoleCookie = consoleClient.cookies.get('portico_console_pre')!;
  const client = new WebClient(running.portal);
  client.cookies.set('portico_portal_pre', consoleCookie);
  const answer = await client.request('POST', '/sign-in', { _csrf: consoleClient.csrf, ...developer });
  assert.equal(answer.status, 403);
  assert.match(answer.text, /Missing or invalid CSRF token/);
  assert.ok(client.cookies.get('portico_portal_pre'), 'a pre-session cookie is issued');
  assert.notEqual(client.cookies.get('portico_portal_pre'), consoleCookie, 'a fresh one');
  assert.equal(client.cookies.has('portico_portal'), false, 'no session');
});

test('a pre-session cookie with a made-up signature is replaced, and the token of its form is refused', async () => {
  const client = new WebClient(running.portal);
  await client.get('/sign-in');
  const issued = client.cookies.get('portico_portal_pre')!;
  const parts = issued.split('.');
  const tampered = [...parts.slice(0, -1), 'A'.repeat(43)].join('.');
  client.cookies.set('portico_portal_pre', tampered);
  const answer = await client.post('/sign-in', developer);
  assert.equal(answer.status, 403);
  assert.notEqual(client.cookies.get('portico_portal_pre'), tampered);
  assert.equal(client.cookies.has('portico_portal'), false);
});

test('a pre-session cookie signed more than 2 hours ago is replaced, and its token is refused with 403', async () => {
  const key = await serverKey(running.handle.platform.store.db, 'pre-session');
  const stale = issuePreSession(key, 'pre-portal', Date.now() - preSessionTtlMs - 60_000);
  const client = new WebClient(running.portal);
  client.cookies.set('portico_portal_pre', stale.cookie);
  const answer = await client.request('POST', '/sign-in', {
    _csrf: preSessionCsrfToken(key, 'pre-portal', stale.nonce),
    ...developer,
  });
  assert.equal(answer.status, 403);
  assert.match(answer.text, /Missing or invalid CSRF token/);
  assert.notEqual(client.cookies.get('portico_portal_pre'), stale.cookie);
  assert.equal(client.cookies.has('portico_portal'), false);

  const recent = issuePreSession(key, 'pre-portal', Date.now() - preSessionTtlMs + 60_000);
  const other = new WebClient(running.portal);
  other.cookies.set('portico_portal_pre', recent.cookie);
  const fields = { _csrf: preSessionCsrfToken(key, 'pre-portal', recent.nonce), ...developer };
  assert.equal((await other.request('POST', '/sign-in', fields)).status, 303, 'one issued 1 h 59 min ago still works');
});

test('a pre-session cookie signed with another key is replaced, and its token is refused with 403', async () => {
  const key = Buffer.alloc(32, 7);
  const forged = issuePreSession(key, 'pre-provider');
  const client = new WebClient(running.management);
  client.cookies.set('portico_console_pre', forged.cookie);
  const fields = { _csrf: preSessionCsrfToken(key, 'pre-provider', forged.nonce), ...provider };
  const answer = await client.request('POST', '/console/sign-in', fields);
  assert.equal(answer.status, 403);
  assert.notEqual(client.cookies.get('portico_console_pre'), forged.cookie);
  assert.equal(client.cookies.has('portico_console'), false);
});

test('a valid pre-session signs in on the portal and the console, and signing in clears its cookie', async () => {
  const portal = new WebClient(running.portal);
  await portal.get('/sign-in');
  const signedIn = await portal.post('/sign-in', { ...developer, next: '/' });
  assert.equal(signedIn.status, 303);
  assert.ok(portal.cookies.get('portico_portal'));
  assert.equal(portal.cookies.has('portico_portal_pre'), false);
  assert.equal((await portal.get('/apps')).status, 200);

  const console = new WebClient(running.management);
  await console.get('/console/sign-in');
  const consoleSignedIn = await console.post('/console/sign-in', provider);
  assert.equal(consoleSignedIn.status, 303);
  assert.ok(console.cookies.get('portico_console'));
  assert.equal(console.cookies.has('portico_console_pre'), false);
  assert.equal((await console.get('/console')).status, 200);
});

test('sign-up works with a server-issued pre-session', async () => {
  const client = new WebClient(running.portal);
  await client.get('/sign-up');
  const email = `pre-${Date.now()}@example.org`;
  const answer = await client.post('/sign-up', { email, password: 'pre-session-pass-1', orgTitle: 'Pre Org' });
  assert.equal(answer.status, 303);
});
