/**
 * The pre-session key is one per installation: every node reads the same key from the store, so a
 * sign-in form served by one node can be posted to another (portal and console behind a load
 * balancer on one PostgreSQL database). Nodes that create the key at the same moment agree on it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform } from '../../src/platform.ts';
import { serverKey } from '../../src/store/server-keys.ts';
import { openStore } from '../../src/store/store.ts';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { postgresTestStore, storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { WebClient } from '../helpers/web-client.ts';

for (const backend of storeBackends) {
  describe(`the pre-session key (${backend.name})`, () => {
    test('two store instances creating it at the same moment get the same key, and keep it', async () => {
      const first = await backend.open();
      const second = await openStore(first.url);
      try {
        const keys = await Promise.all([
          serverKey(first.store.db, 'pre-session'),
          serverKey(second.db, 'pre-session'),
          serverKey(first.store.db, 'pre-session'),
          serverKey(second.db, 'pre-session'),
        ]);
        assert.equal(keys[0].length, 32);
        for (const key of keys) assert.ok(key.equals(keys[0]));
        assert.ok((await serverKey(second.db, 'pre-session')).equals(keys[0]));
        assert.ok(!(await serverKey(second.db, 'other-purpose')).equals(keys[0]), 'one key per name');
      } finally {
        await second.close();
        await first.dispose();
      }
    });
  });
}

describe('pre-sessions across two nodes on one PostgreSQL database', () => {
  let db: TestStore;
  let a: TestPlatform;
  let b: Platform;
  let dataDir: string;

  before(async () => {
    db = await postgresTestStore();
    a = await startTestPlatform({ env: { PORTICO_DATABASE_URL: db.url } });
    dataDir = mkdtempSync(join(tmpdir(), 'portico-pre-b-'));
    const settings = loadSettings(
      {
        PORTICO_PORTAL_PORT: '0',
        PORTICO_MANAGEMENT_PORT: '0',
        PORTICO_DRAIN_SECONDS: '0',
        PORTICO_DATABASE_URL: db.url,
      },
      { dataDir },
    );
    b = await startPlatform(settings, pino({ level: 'silent' }), ['management', 'portal']);
  });
  after(async () => {
    await b?.close();
    await a?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await db?.dispose();
  });

  /** Opens `page` on one node and returns a client for the other node holding its cookies and token. */
  async function formFrom(servedBy: string, postedTo: string, page: string): Promise<WebClient> {
    const first = new WebClient(servedBy);
    assert.equal((await first.get(page)).status, 200);
    const second = new WebClient(postedTo);
    for (const [name, value] of first.cookies) second.cookies.set(name, value);
    second.csrf = first.csrf;
    return second;
  }

  test('a console sign-in form served by one node signs in on the other, both ways', async () => {
    const credentials = { username: 'admin', password: adminPassword };
    for (const [from, to] of [
      [a.management, b.urls.management!],
      [b.urls.management!, a.management],
    ]) {
      const client = await formFrom(from, to, '/console/sign-in');
      const answer = await client.post('/console/sign-in', credentials);
      assert.equal(answer.status, 303, `${from} → ${to}`);
      assert.ok(client.cookies.get('portico_console'));
    }
  });

  test('a portal sign-up form served by one node is accepted by the other, and no pre-session is stored', async () => {
    const rows = async () =>
      Number(
        (
          await a.platform.store.db
            .selectFrom('sessions')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await rows();
    const client = await formFrom(a.platform.urls.portal!, b.urls.portal!, '/sign-up');
    assert.equal(await rows(), before, 'serving the form wrote no session');
    const fields = { email: `across-${Date.now()}@example.org`, password: 'across-pass-123', orgTitle: 'Across' };
    assert.equal((await client.post('/sign-up', fields)).status, 303);
  });
});
