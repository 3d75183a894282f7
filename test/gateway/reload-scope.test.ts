/**
 * A reload reads again only what the changes since the last one can have touched (issue 18: at
 * 100 000 subscriptions a full read held the event loop for ~1 s at every change). Each test
 * makes a real change through the services, reloads, and checks both that what was kept is the
 * same object as before (not read again) and that the gateway answers as the change says.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { recordChange } from '../../src/store/changes.ts';
import type { ChangeKind } from '../../src/store/changes.ts';
import { findAppById, listCredentials } from '../../src/store/consumers.ts';
import { loadSnapshotData } from '../../src/store/snapshot-data.ts';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import { TimeSlices } from '../../src/time-slices.ts';

const productText = readFileSync(
  new URL('../../examples/accessories/accessories-product.yaml', import.meta.url),
  'utf8',
);

const extraApi = (version: string) =>
  [
    'swagger: "2.0"',
    `info: { title: extra, x-ibm-name: extra, version: ${version} }`,
    'basePath: /extra',
    'paths: { /ping: { get: { responses: { "200": { description: ok } } } } }',
    'x-ibm-configuration: { assembly: { execute: [] } }',
  ].join('\n');

describe('a reload reads only what changed', () => {
  let t: TestDemo;
  before(async () => {
    t = await startTestDemo();
  });
  after(async () => {
    await t.close();
  });

  const gateway = () => t.handle.platform.gateway!;
  const productId = async (name: string) =>
    (await t.handle.platform.services.product(t.orgId, 'sandbox', name, '1.0.0')).id;
  const accessoriesId = () => productId('accessories');
  const call = (clientId: string) =>
    fetch(`${t.base}/logistics/shipping?zip=90210`, { headers: { 'X-IBM-Client-Id': clientId } });

  test('an API import keeps the apps, credentials and subscribers read before', async () => {
    const app = await t.newApp('silver');
    const before = gateway().current!;
    const subscribers = before.subscribersOf.get(await accessoriesId());
    assert.ok(subscribers?.has(app.appId));
    await t.handle.platform.services.importApi(t.orgId, { text: extraApi('1.0.0'), file: 'extra.yaml' });
    await gateway().reload();
    const after = gateway().current!;
    assert.ok(after.change > before.change, 'the snapshot was rebuilt');
    assert.equal(after.credentials, before.credentials, 'the credential index is the one read before');
    assert.equal(after.subscribersOf.get(await accessoriesId()), subscribers);
    assert.equal((await call(app.clientId)).status, 200);
  });

  test("a republished product's new plan limit applies at once; the credential index is kept", async () => {
    const app = await t.newApp('silver');
    assert.equal((await call(app.clientId)).headers.get('x-ratelimit-limit'), 'name=default,100;');
    const before = gateway().current!;
    await t.handle.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText.replace('value: 100/1hour', 'value: 250/1hour'),
      file: 'accessories-product.yaml',
      state: 'published',
    });
    await gateway().reload();
    const after = gateway().current!;
    assert.equal(after.credentials, before.credentials);
    assert.notEqual(after.subscribersOf.get(await accessoriesId()), before.subscribersOf.get(await accessoriesId()));
    assert.equal((await call(app.clientId)).headers.get('x-ratelimit-limit'), 'name=default,250;');
  });

  test("a revoked subscription is refused at once; apps, credentials, other products' subscribers kept", async () => {
    const app = await t.newApp('silver');
    assert.equal((await call(app.clientId)).status, 200);
    const before = gateway().current!;
    const inventory = before.subscribersOf.get(await productId('inventory'));
    assert.ok(inventory, "the demo's app subscribes to inventory");
    await t.handle.platform.services.revokeSubscription(t.orgId, 'sandbox', app.subscriptionId);
    await gateway().reload();
    assert.equal(gateway().current!.credentials, before.credentials);
    assert.equal(gateway().current!.subscribersOf.get(await productId('inventory')), inventory);
    const refused = await call(app.clientId);
    assert.equal(refused.status, 401);
  });

  test("a new app and a reset secret are seen, other apps' entries kept; an unknown kind reads everything", async () => {
    const demoClient = t.handle.clientId;
    const before = gateway().current!;
    const app = await t.newApp('silver');
    const after = gateway().current!;
    assert.notEqual(after.credentials, before.credentials, 'the new app is in a new index');
    assert.equal(after.credentials.get(demoClient), before.credentials.get(demoClient), 'other apps were not read');
    assert.equal((await call(app.clientId)).status, 200);

    const db = t.handle.platform.services.store.db;
    const row = (await findAppById(db, app.appId))!;
    const [credential] = await listCredentials(db, app.appId);
    const oldHash = after.credentials.get(app.clientId)!.secretHash;
    await t.handle.platform.consumerServices.resetSecret(row.consumer_org_id, app.appId, credential.id);
    await gateway().reload();
    const reset = gateway().current!;
    assert.notEqual(reset.credentials.get(app.clientId)!.secretHash, oldHash, 'the new secret is the one checked');
    assert.equal(reset.credentials.get(demoClient), before.credentials.get(demoClient));

    const known = gateway().current!;
    // A kind this node does not know (a newer node's): the type allows none, the store any.
    await recordChange(db, 'some-future-kind' as ChangeKind);
    await gateway().reload();
    assert.notEqual(gateway().current!.credentials.get(demoClient), known.credentials.get(demoClient));
    assert.notEqual(
      gateway().current!.subscribersOf.get(await accessoriesId()),
      known.subscribersOf.get(await accessoriesId()),
    );
  });

  test("a deleted credential or app is refused at once; other apps' entries and other products' subscribers kept", async () => {
    const consumers = t.handle.platform.consumerServices;
    const app = await t.newApp('silver');
    await t.newApp('default', { product: 'inventory' });
    const org = (await findAppById(t.handle.platform.services.store.db, app.appId))!.consumer_org_id;
    const second = await consumers.addCredential(org, app.appId, 'rotation');
    await gateway().reload();
    assert.equal((await call(second.credential.client_id)).status, 200);
    await consumers.deleteCredential(org, app.appId, second.credential.id);
    await gateway().reload();
    assert.equal((await call(second.credential.client_id)).status, 401);
    assert.equal((await call(app.clientId)).status, 200, 'the first credential stays');
    const before = gateway().current!;
    const inventory = before.subscribersOf.get(await productId('inventory'));
    assert.ok(inventory && inventory.size > 0);
    await consumers.deleteApp(org, app.appId);
    await gateway().reload();
    const after = gateway().current!;
    assert.equal((await call(app.clientId)).status, 401);
    assert.equal((await call(t.handle.clientId)).status, 200, "another app's calls go on");
    assert.equal(after.credentials.get(t.handle.clientId), before.credentials.get(t.handle.clientId), 'not read again');
    assert.equal(after.subscribersOf.get(await productId('inventory')), inventory, 'not read again');
    assert.equal(after.subscribersOf.get(await accessoriesId())?.has(app.appId), false);
  });

  test("a deleted consumer org's apps are refused at once; other apps' entries kept", async () => {
    const db = t.handle.platform.services.store.db;
    const app = await t.newApp('silver');
    const org = (await findAppById(db, app.appId))!.consumer_org_id;
    const other = await t.handle.platform.consumerServices.createApp(org, { title: 'Second app' });
    await gateway().reload();
    const before = gateway().current!;
    assert.ok(before.credentials.has(other.credential.client_id));
    const name = (await db.selectFrom('consumer_orgs').select('name').where('id', '=', org).executeTakeFirstOrThrow())
      .name;
    await t.handle.platform.services.deleteConsumerOrg({ orgId: t.orgId, catalog: 'sandbox', name });
    await gateway().reload();
    const after = gateway().current!;
    assert.equal((await call(app.clientId)).status, 401);
    assert.equal(after.credentials.has(other.credential.client_id), false);
    assert.equal(after.subscribersOf.get(await accessoriesId())?.has(app.appId), false);
    assert.equal(after.credentials.get(t.handle.clientId), before.credentials.get(t.handle.clientId), 'not read again');
    assert.equal((await call(t.handle.clientId)).status, 200);
  });

  /** What a load from the current snapshot's base would read, after `change`: the APIs whose documents it reads. */
  async function documentsReadAfter(change: () => Promise<unknown>, slices?: TimeSlices): Promise<string[]> {
    await gateway().reload();
    const base = gateway().current!.base;
    assert.ok(base?.compiled, 'the compiler records what it compiled');
    await change();
    const store = t.handle.platform.services.store;
    const data = await store.consistentRead((trx) => loadSnapshotData(trx, base, slices));
    return data.apis.filter((api) => api.document !== undefined).map((api) => `${api.name}:${api.version}`);
  }

  test("a publish reads none; a replaced API only its own; a catalog's, registry's, OAuth provider's or unknown change every one", async () => {
    const services = t.handle.platform.services;
    const every = [...gateway().current!.catalogs.values()]
      .flatMap((catalog) => catalog.apis)
      .map((api) => `${api.name}:${api.version}`)
      .sort();
    assert.ok(every.length >= 2, `the demo serves several APIs: ${every.join(', ')}`);
    const republish = () =>
      services.putProduct(t.orgId, 'sandbox', {
        text: productText.replace('value: 100/1hour', 'value: 300/1hour'),
        file: 'accessories-product.yaml',
        state: 'published',
      });
    const slices = new TimeSlices(0);
    assert.deepEqual(await documentsReadAfter(republish, slices), []);
    assert.ok(slices.turns > 3, `the load gave the event loop turns between its reads (${slices.turns})`);

    const original = (await services.api(t.orgId, 'logistics', '2.0.0')).document;
    const changed = JSON.parse(original) as { info: Record<string, unknown> };
    changed.info.description = 'Shipping rates and store locations (changed)';
    const replace = (text: string) => services.importApi(t.orgId, { text, file: 'logistics.json', replace: true });
    try {
      assert.deepEqual(await documentsReadAfter(() => replace(JSON.stringify(changed))), ['logistics:2.0.0']);
    } finally {
      await replace(original);
    }

    const db = services.store.db;
    // A kind this node does not know (a newer node's) may change anything: every document too.
    for (const kind of [
      'catalog',
      'user-registry',
      'oauth-provider',
      'oauth-key',
      'some-future-kind',
    ] as ChangeKind[]) {
      const read = await documentsReadAfter(() => recordChange(db, kind));
      assert.deepEqual(read.sort(), every, kind);
    }
    await gateway().reload();
    assert.equal(
      (await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers: { 'X-IBM-Client-Id': t.handle.clientId } }))
        .status,
      200,
    );
  });
});

describe('PostgreSQL: a change committed after a later one is still seen', () => {
  test('an app added by a transaction whose change id is below the base is read at the next reload', async () => {
    const t = await postgresTestStore();
    try {
      const services = new ProviderServices(t.store);
      const { orgId } = await services.ensureOrg('gapped');
      const api = await services.importApi(orgId, { text: extraApi('1.0.0'), file: 'extra.yaml' });
      await services.setApiState(orgId, api.api.name, api.api.version, 'online');
      await services.putProduct(orgId, 'sandbox', {
        text: [
          'product: 1.0.0',
          'info: { name: gapped, title: gapped, version: 1.0.0 }',
          'plans: { default: { title: Default } }',
          'apis: { extra: { name: "extra:1.0.0" } }',
        ].join('\n'),
        file: 'gapped.yaml',
        state: 'published',
      });
      const load = (base?: Parameters<typeof loadSnapshotData>[1]) =>
        t.store.consistentRead((trx) => loadSnapshotData(trx, base));
      const first = await load();
      // Transaction A takes its change id first and commits last; B commits in between.
      let commitA!: () => void;
      const held = new Promise<void>((resolve) => (commitA = resolve));
      let recorded!: () => void;
      const idTaken = new Promise<void>((resolve) => (recorded = resolve));
      const a = t.store.transaction(async (trx) => {
        await recordChange(trx, 'app', 'postgres');
        recorded();
        await held;
      });
      await idTaken;
      await recordChange(t.store.db, 'api', 'postgres');
      const middle = await load(first.base);
      assert.deepEqual(middle.apps, [], "B's change alone reads no apps");
      assert.ok(middle.base!.missing.length > 0, "A's id is remembered as not committed");
      commitA();
      await a;
      const last = await load(middle.base);
      assert.equal(last.appsOf, 'all', "A's change (naming no app), committed late, has every app read");
      assert.equal(last.change, middle.change, 'A committed no later id');
    } finally {
      await t.dispose();
    }
  });
});

for (const backend of ['SQLite', 'PostgreSQL'] as const) {
  describe(`${backend}: a load of every row, in pages`, () => {
    test('pages of 2 read what one query reads, with a turn after each full page', async () => {
      const pg = backend === 'PostgreSQL' ? await postgresTestStore(false) : undefined;
      const demo = await startTestDemo(pg ? { PORTICO_DATABASE_URL: pg.url } : {});
      try {
        await demo.newApp('silver');
        await demo.newApp('gold');
        const store = demo.handle.platform.services.store;
        const whole = await store.consistentRead((trx) => loadSnapshotData(trx));
        const slices = new TimeSlices(0);
        const paged = await store.consistentRead((trx) => loadSnapshotData(trx, undefined, slices, 2));
        const sorted = <T>(rows: T[]) => rows.map((row) => JSON.stringify(row)).sort();
        assert.ok(whole.subscriptions.length > 2 && whole.apps.length > 2 && whole.credentials.length > 2);
        assert.deepEqual(sorted(paged.subscriptions), sorted(whole.subscriptions));
        assert.deepEqual(sorted(paged.apps), sorted(whole.apps));
        assert.deepEqual(sorted(paged.credentials), sorted(whole.credentials));
        const pages = [whole.subscriptions, whole.apps, whole.credentials].reduce(
          (n, rows) => n + Math.floor(rows.length / 2),
          0,
        );
        assert.ok(slices.turns >= pages, `a turn after each full page (${slices.turns} of at least ${pages})`);
      } finally {
        await demo.close();
        await pg?.dispose();
      }
    });
  });
}
