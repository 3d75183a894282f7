/**
 * Portal and console sessions end after PORTICO_SESSION_IDLE_MINUTES without a request (default
 * 60), besides their absolute lifetime. Activity is recorded in `sessions.last_seen` at most once
 * a minute per session, so a signed-in page view is not a write. Management API tokens keep
 * their own lifetime only. The tests move `last_seen` back in the store instead of sleeping.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { demo } from '../../src/cli/demo.ts';
import { loadSettings } from '../../src/config/config.ts';
import { PorticoError } from '../../src/errors.ts';
import { hashToken } from '../../src/store/secrets.ts';
import type { Store } from '../../src/store/store.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';

const minute = 60_000;

async function lastSeen(store: Store, token: string): Promise<number | undefined> {
  const row = await store.db
    .selectFrom('sessions')
    .select('last_seen')
    .where('id', '=', hashToken(token))
    .executeTakeFirst();
  return row?.last_seen;
}

/** Moves the session's last activity `ms` into the past, as if nothing had happened since. */
async function idleFor(store: Store, token: string, ms: number): Promise<void> {
  await store.db
    .updateTable('sessions')
    .set({ last_seen: Date.now() - ms })
    .where('id', '=', hashToken(token))
    .execute();
}

describe('idle timeout of web sessions (default 60 minutes)', () => {
  let running: RunningDemo;
  let store: Store;

  before(async () => {
    running = await startPortalDemo();
    store = running.handle.platform.store;
  });
  after(async () => {
    await running?.close();
  });

  async function portalSession(): Promise<{ client: WebClient; token: string }> {
    const client = new WebClient(running.portal);
    assert.equal(await client.signIn(demo.developer.email, demo.developer.password), 303);
    return { client, token: client.cookies.get('portico_portal')! };
  }

  test('a request within a minute of the last recorded one writes nothing', async () => {
    const { client, token } = await portalSession();
    const first = await lastSeen(store, token);
    assert.ok(first !== undefined && first <= Date.now());
    assert.equal((await client.get('/apps')).status, 200);
    assert.equal((await client.get('/apps')).status, 200);
    assert.equal(await lastSeen(store, token), first);
  });

  test('a request more than a minute after the last recorded one records it', async () => {
    const { client, token } = await portalSession();
    await idleFor(store, token, 2 * minute);
    const before = Date.now();
    assert.equal((await client.get('/apps')).status, 200);
    const seen = await lastSeen(store, token);
    assert.ok(seen !== undefined && seen >= before, `last_seen ${seen} recorded at ${before} or later`);
  });

  test('a portal session idle for 59 minutes still works', async () => {
    const { client, token } = await portalSession();
    await idleFor(store, token, 59 * minute);
    assert.equal((await client.get('/apps')).status, 200);
  });

  test('a portal session idle for 61 minutes is signed out: the next page asks to sign in', async () => {
    const { client, token } = await portalSession();
    await idleFor(store, token, 61 * minute);
    const apps = await client.get('/apps');
    assert.equal(apps.status, 303);
    assert.match(apps.location, /^\/sign-in\?next=/);
    const signIn = await client.get('/sign-in');
    assert.equal(signIn.status, 200);
    assert.match(signIn.text, /action="\/sign-in"/);
    assert.equal(await lastSeen(store, token), undefined, 'the idle session is deleted');
    assert.equal(await client.signIn(demo.developer.email, demo.developer.password), 303, 'signing in again works');
    assert.equal((await client.get('/apps')).status, 200);
  });

  test('a console session idle for 61 minutes is signed out', async () => {
    const client = new WebClient(running.management);
    await client.get('/console/sign-in');
    const { username, password } = demo.provider;
    assert.equal((await client.post('/console/sign-in', { username, password })).status, 303);
    const token = client.cookies.get('portico_console')!;
    assert.equal((await client.get('/console')).status, 200);
    await idleFor(store, token, 61 * minute);
    const page = await client.get('/console');
    assert.equal(page.status, 303);
    assert.match(page.location, /^\/console\/sign-in\?next=/);
  });

  test('a management API token has no idle timeout', async () => {
    const login = await fetch(`${running.management}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: demo.provider.username, password: demo.provider.password }),
    });
    const { token } = (await login.json()) as { token: string };
    await idleFor(store, token, 10 * 60 * minute);
    const me = await fetch(`${running.management}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
  });
});

describe('PORTICO_SESSION_IDLE_MINUTES', () => {
  let t: TestPlatform;

  before(async () => {
    t = await startTestPlatform({ env: { PORTICO_SESSION_IDLE_MINUTES: '5' } });
  });
  after(async () => {
    await t?.close();
  });

  test('sets the idle timeout: a console session idle for 6 of 5 minutes is signed out', async () => {
    const client = new WebClient(t.management);
    await client.get('/console/sign-in');
    assert.equal((await client.post('/console/sign-in', { username: 'admin', password: adminPassword })).status, 303);
    const token = client.cookies.get('portico_console')!;
    await idleFor(t.platform.store, token, 4 * minute);
    assert.equal((await client.get('/console')).status, 200);
    await idleFor(t.platform.store, token, 6 * minute);
    assert.equal((await client.get('/console')).status, 303);
  });

  test('a value that is not a whole number of minutes from 1 to 10080 stops the start with CONFIG_INVALID', () => {
    for (const bad of ['0', '-5', '1.5', 'soon', '10081']) {
      assert.throws(
        () => loadSettings({ PORTICO_SESSION_IDLE_MINUTES: bad }),
        (error: unknown) =>
          error instanceof PorticoError &&
          error.code === 'CONFIG_INVALID' &&
          /PORTICO_SESSION_IDLE_MINUTES/.test(error.message),
        bad,
      );
    }
    assert.equal(loadSettings({}).sessionIdleMinutes, 60);
  });
});
