/**
 * Every app and every credential pair is a client id in each gateway node's snapshot, and anyone
 * may sign up on a portal: a consumer organization holds at most PORTICO_MAX_APPS_PER_CONSUMER_ORG
 * apps (100) and an app PORTICO_MAX_CREDENTIALS_PER_APP pairs (10). Past the limit: 409
 * MGMT_CONFLICT naming it, nothing written; deleting one makes room. Creations raced against each
 * other stop at the limit too, on SQLite and on PostgreSQL (row lock). Over HTTP, the portal's
 * form says why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadSettings } from '../../src/config/config.ts';
import { demo } from '../../src/cli/demo.ts';
import { PorticoError } from '../../src/errors.ts';
import { ConsumerServices } from '../../src/services/consumer-services.ts';
import { countApps, countCredentials } from '../../src/store/consumer-limits.ts';
import { createConsumerOrg } from '../../src/store/consumers.ts';
import { createCatalog, createOrg } from '../../src/store/orgs.ts';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { WebClient } from '../helpers/web-client.ts';

const refusedAt = (most: number, what: 'apps' | 'credentials') => (error: unknown) =>
  error instanceof PorticoError &&
  error.code === 'MGMT_CONFLICT' &&
  error.status === 409 &&
  error.message.includes(`has ${most} ${what}, the most allowed`);

for (const backend of storeBackends) {
  describe(`${backend.name}: a consumer organization's apps and an app's credentials are bounded`, () => {
    let t: TestStore;
    let services: ConsumerServices;
    let catalogId: string;
    let n = 0;
    const newOrg = async () =>
      (await createConsumerOrg(t.store.db, { catalogId, name: `c${++n}`, title: `C ${n}` })).id;

    before(async () => {
      t = await backend.open();
      const org = await createOrg(t.store.db, { name: 'acme', title: 'Acme' });
      catalogId = (await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' })).id;
      services = new ConsumerServices(t.store, undefined, undefined, undefined, {
        appsPerConsumerOrg: 3,
        credentialsPerApp: 2,
      });
    });
    after(async () => {
      await t?.dispose();
    });

    test('the fourth app is refused and nothing is written; deleting one makes room', async () => {
      const orgId = await newOrg();
      const made = [];
      for (let i = 0; i < 3; i++) made.push(await services.createApp(orgId, { title: `App ${i}` }));
      await assert.rejects(services.createApp(orgId, { title: 'One too many' }), refusedAt(3, 'apps'));
      assert.equal(await countApps(t.store.db, orgId), 3);
      await services.deleteApp(orgId, made[0].app.id);
      await services.createApp(orgId, { title: 'Room again' });
      assert.equal(await countApps(t.store.db, orgId), 3);
      // Another organization has its own three.
      const other = await newOrg();
      await services.createApp(other, { title: 'Elsewhere' });
    });

    test('ten creations at once in an empty organization: three made, seven refused', async () => {
      const orgId = await newOrg();
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => services.createApp(orgId, { title: `Raced ${i}` })),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
      for (const r of results.filter((r) => r.status === 'rejected')) assert.ok(refusedAt(3, 'apps')(r.reason));
      assert.equal(await countApps(t.store.db, orgId), 3);
    });

    test("an app's credential pairs stop at two, raced or not", async () => {
      const orgId = await newOrg();
      const { app } = await services.createApp(orgId, { title: 'Keys' });
      await services.addCredential(orgId, app.id, 'second');
      await assert.rejects(services.addCredential(orgId, app.id, 'third'), refusedAt(2, 'credentials'));
      assert.equal(await countCredentials(t.store.db, app.id), 2);
      const raced = (await services.createApp(orgId, { title: 'Raced keys' })).app;
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => services.addCredential(orgId, raced.id, `r${i}`)),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.equal(await countCredentials(t.store.db, raced.id), 2);
    });
  });
}

describe('the settings', () => {
  test('default to 100 apps and 10 credential pairs; out of range is refused naming the variable', () => {
    const settings = loadSettings({});
    assert.equal(settings.maxAppsPerConsumerOrg, 100);
    assert.equal(settings.maxCredentialsPerApp, 10);
    assert.throws(() => loadSettings({ PORTICO_MAX_APPS_PER_CONSUMER_ORG: '0' }), /PORTICO_MAX_APPS_PER_CONSUMER_ORG/);
    assert.throws(() => loadSettings({ PORTICO_MAX_CREDENTIALS_PER_APP: 'many' }), /PORTICO_MAX_CREDENTIALS_PER_APP/);
  });
});

describe('on the portal (the demo, its developer holding one app)', () => {
  let d: TestDemo;
  let web: WebClient;

  before(async () => {
    d = await startTestDemo({ PORTICO_MAX_APPS_PER_CONSUMER_ORG: '2', PORTICO_MAX_CREDENTIALS_PER_APP: '2' });
    web = new WebClient(d.handle.platform.urls.portal!);
    assert.equal(await web.signIn(demo.developer.email, demo.developer.password), 303);
  });
  after(async () => {
    await d?.close();
  });

  test('the second app is made; the third form answers 409 saying why, kept as typed', async () => {
    await web.get('/apps/new');
    const second = await web.post('/apps', { title: 'Second', description: '' });
    assert.equal(second.status, 303);
    await web.get('/apps/new');
    const third = await web.post('/apps', { title: 'Third <app>', description: '' });
    assert.equal(third.status, 409);
    assert.match(third.text, /the organization has 2 apps, the most allowed: delete one to create another/);
    assert.match(third.text, /value="Third &lt;app&gt;"/);
  });

  test('a second credential pair is added; a third is refused with 409', async () => {
    const apps = (await web.get('/apps')).text;
    const path = /href="(\/apps\/[0-9a-f-]{36})"/.exec(apps)![1];
    await web.get(path);
    assert.equal((await web.post(`${path}/credentials`)).status, 303);
    await web.get(path);
    const refused = await web.post(`${path}/credentials`);
    assert.equal(refused.status, 409);
    assert.match(refused.text, /role="alert">the app has 2 credentials, the most allowed/);
    assert.match(refused.text, /<h1[^>]*>Demo App/, 'the app page, saying why');
  });
});
