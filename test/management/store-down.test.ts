/**
 * Issue 15, item 4: management with its PostgreSQL gone answers 503 `STORE_UNREACHABLE`, not 500;
 * `/health` is liveness (200 while the process answers), `/ready` readiness (503 while the store
 * does not answer). The database really goes away: the platform reaches it through a TCP relay
 * that the test cuts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { startRelay } from '../helpers/processes.ts';
import type { Relay } from '../helpers/processes.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

describe('management with the store down', () => {
  let db: TestStore;
  let relay: Relay;
  let t: TestPlatform;
  let token: string;

  before(async () => {
    db = await postgresTestStore();
    const url = new URL(db.url);
    relay = await startRelay(Number(url.port || 5432), url.hostname);
    url.port = String(relay.port);
    t = await startTestPlatform({ role: 'management', env: { PORTICO_DATABASE_URL: url.toString() } });
    token = await t.token();
  });
  after(async () => {
    await t?.close();
    await db?.dispose();
  });

  test('answers /health and /ready 200 while the store answers', async () => {
    for (const path of ['/health', '/ready']) {
      const response = await fetch(`${t.management}${path}`);
      assert.equal(response.status, 200, path);
      await response.arrayBuffer();
    }
    assert.equal((await t.call('GET', '/api/apis', undefined, token)).status, 200);
  });

  test('answers 503 STORE_UNREACHABLE once the store is gone, /ready 503 and /health still 200', async () => {
    await relay.cut();
    const listed = await t.call('GET', '/api/apis', undefined, token);
    assert.equal(listed.status, 503);
    assert.equal(listed.body.error.code, 'STORE_UNREACHABLE');
    const signIn = await t.call('POST', '/api/login', { username: 'admin', password: 'wrong' }, null);
    assert.equal(signIn.status, 503, 'sign-in needs the store too');
    assert.equal(signIn.body.error.code, 'STORE_UNREACHABLE');
    assert.doesNotMatch(JSON.stringify(signIn.body), /127\.0\.0\.1|postgres:\/\//, 'the database address is not told');
    const ready = await fetch(`${t.management}/ready`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { error: { code: string } }).error.code, 'STORE_UNREACHABLE');
    const health = await fetch(`${t.management}/health`);
    assert.equal(health.status, 200);
    await health.arrayBuffer();
  });
});
