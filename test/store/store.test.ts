import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import {
  insertApi,
  findApi,
  listApis,
  setApiState,
  productsUsingApi,
  productsUsingOrgApis,
} from '../../src/store/apis.ts';
import {
  callsOverTime,
  countBy,
  latencyPercentiles,
  listEvents,
  purgeEvents,
  subscriptionCallsSince,
} from '../../src/store/analytics.ts';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import { latestChange, recordChange } from '../../src/store/changes.ts';
import {
  addCredential,
  createApp,
  createConsumerOrg,
  createPortalUser,
  createSubscription,
  deleteApp,
  findApp,
  findPortalUserByEmail,
  listSubscriptionDetails,
  resetCredentialSecret,
  setSubscriptionState,
} from '../../src/store/consumers.ts';
import { createCatalog, createOrg, createProviderUser, findCatalog, findProviderUser } from '../../src/store/orgs.ts';
import { listPlans, listProductApis, setProductState, upsertProduct } from '../../src/store/products.ts';
import type { ProductInput } from '../../src/store/products.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { hashPassword, secretMatches, verifyPassword } from '../../src/store/secrets.ts';
import { createSession, findSession, deleteSession } from '../../src/store/sessions.ts';
import { loadSnapshotData } from '../../src/store/snapshot-data.ts';
import { openStore } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

function productInput(catalogId: string, apiId: string, overrides: Partial<ProductInput> = {}): ProductInput {
  const input: ProductInput = {
    catalogId,
    name: 'accessories',
    version: '1.0.0',
    title: 'Accessories',
    state: 'staged',
    viewType: 'authenticated',
    subscribeType: 'authenticated',
    viewOrgs: [],
    subscribeOrgs: [],
    document: { product: '1.0.0', info: { name: 'accessories', version: '1.0.0' } },
    plans: [
      {
        name: 'silver',
        title: 'Silver',
        description: 'Limited',
        approval: false,
        rateLimits: [{ name: 'default', value: '100/1hour' }],
        burstLimits: [],
      },
      {
        name: 'gold',
        title: 'Gold',
        description: 'Unlimited',
        approval: true,
        rateLimits: [],
        burstLimits: [],
      },
    ],
    apis: [{ apiId, key: 'logistics' }],
    ...overrides,
  };
  // As the import stores a product: its document names the plans its plan rows hold.
  const plans = Object.fromEntries(input.plans.map((plan) => [plan.name, { title: plan.title }]));
  return { ...input, document: { ...input.document, plans } };
}

// Each event its own transaction id: a call stored again with the same one is skipped (migration 0014).
let eventCount = 0;

function event(overrides: Partial<NewActivityEvent>): NewActivityEvent {
  return {
    ts: 1_700_000_000_000,
    tx_id: `tx-${eventCount++}`,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: 'logistics',
    api_version: '2.0.0',
    operation_id: 'shipping.calc',
    verb: 'GET',
    path: '/logistics/shipping',
    status: 200,
    latency_ms: 5,
    backend_ms: 3,
    client_id: 'c1',
    app_id: 'a1',
    app_name: 'App',
    consumer_org_name: 'dev',
    product_name: 'accessories',
    plan_name: 'silver',
    error_name: '',
    content: 'activity',
    request_headers: null,
    request_body: null,
    response_headers: null,
    response_body: null,
    ...overrides,
  };
}

for (const backend of storeBackends) {
  describe(`store on ${backend.name}`, () => {
    let t: TestStore;
    before(async () => {
      t = await backend.open();
    });
    after(async () => {
      await t.dispose();
    });

    test('migrations are idempotent: opening a migrated store again changes nothing', async () => {
      const again = await openStore(t.url);
      const tables = await again.db.introspection.getTables();
      assert.ok(tables.some((table) => table.name === 'subscriptions'));
      await again.close();
    });

    test('an org gets catalogs and provider users with argon2id password hashes', async () => {
      const org = await createOrg(t.store.db, { name: 'acme', title: 'Acme' });
      await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' });
      const hash = await hashPassword('s3cret-pass');
      assert.match(hash, /^\$argon2id\$/);
      await createProviderUser(t.store.db, {
        orgId: org.id,
        username: 'admin',
        email: 'a@example.com',
        passwordHash: hash,
      });
      const user = await findProviderUser(t.store.db, 'admin');
      assert.ok(user);
      assert.equal(await verifyPassword(user.password_hash, 's3cret-pass'), true);
      assert.equal(await verifyPassword(user.password_hash, 'wrong'), false);
      assert.equal((await findCatalog(t.store.db, org.id, 'sandbox'))?.title, 'Sandbox');
    });

    test('a duplicate api name:version is refused by the store and the first row is kept', async () => {
      const org = await createOrg(t.store.db, { name: 'dup-org', title: 'Dup' });
      await insertApi(t.store.db, {
        orgId: org.id,
        name: 'logistics',
        version: '2.0.0',
        title: 'first',
        basePath: '/logistics',
        document: { a: 1 },
      });
      await assert.rejects(
        insertApi(t.store.db, {
          orgId: org.id,
          name: 'logistics',
          version: '2.0.0',
          title: 'second',
          basePath: '/x',
          document: { b: 2 },
        }),
      );
      const api = await findApi(t.store.db, org.id, 'logistics', '2.0.0');
      assert.equal(api?.title, 'first');
      assert.equal(api?.state, 'offline');
      assert.deepEqual(JSON.parse(api!.document), { a: 1 });
    });

    test('a failed transaction leaves nothing behind', async () => {
      const org = await createOrg(t.store.db, { name: 'tx-org', title: 'Tx' });
      await assert.rejects(
        t.store.transaction(async (trx) => {
          await insertApi(trx, {
            orgId: org.id,
            name: 'a',
            version: '1.0.0',
            title: 'a',
            basePath: '/a',
            document: {},
          });
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.deepEqual(await listApis(t.store.db, org.id), []);
    });

    test("an org's API list carries no documents: each may hold 10 MiB, and the list is read on every console page", async () => {
      const org = await createOrg(t.store.db, { name: 'list-org', title: 'L' });
      const document = { swagger: '2.0', info: { title: 'Big', version: '1.0.0' }, 'x-padding': 'p'.repeat(100_000) };
      for (const name of ['b-api', 'a-api']) {
        await insertApi(t.store.db, {
          orgId: org.id,
          name,
          version: '1.0.0',
          title: name,
          basePath: `/${name}`,
          document,
        });
      }
      const listed = await listApis(t.store.db, org.id);
      assert.deepEqual(
        listed.map((api) => [api.name, api.base_path, api.state]),
        [
          ['a-api', '/a-api', 'offline'],
          ['b-api', '/b-api', 'offline'],
        ],
      );
      for (const api of listed) {
        assert.equal('document' in api, false);
        assert.equal('attachments' in api, false);
      }
    });

    test('re-publishing a product keeps plan ids and subscriptions; a dropped plan cancels its subscriptions', async () => {
      const org = await createOrg(t.store.db, { name: 'prod-org', title: 'P' });
      const catalog = await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' });
      const api = await insertApi(t.store.db, {
        orgId: org.id,
        name: 'logistics',
        version: '2.0.0',
        title: 'l',
        basePath: '/logistics',
        document: {},
      });
      const { product, created } = await t.store.transaction((trx) =>
        upsertProduct(trx, productInput(catalog.id, api.id)),
      );
      assert.equal(created, true);
      const plans = await listPlans(t.store.db, product.id);
      assert.deepEqual(
        plans.map((p) => [p.name, p.approval]),
        [
          ['silver', 0],
          ['gold', 1],
        ],
      );
      assert.deepEqual(
        (await productsUsingApi(t.store.db, api.id)).map((p) => p.name),
        ['accessories'],
      );
      const unused = await insertApi(t.store.db, {
        orgId: org.id,
        name: 'unused',
        version: '1.0.0',
        title: 'u',
        basePath: '/unused',
        document: {},
      });
      const byApi = await productsUsingOrgApis(t.store.db, org.id);
      assert.deepEqual(
        byApi.get(api.id)?.map((p) => `${p.name}:${p.version}`),
        ['accessories:1.0.0'],
      );
      assert.equal(byApi.has(unused.id), false);
      const otherOrg = await createOrg(t.store.db, { name: 'other-org', title: 'O' });
      assert.equal((await productsUsingOrgApis(t.store.db, otherOrg.id)).size, 0);

      const corg = await createConsumerOrg(t.store.db, { catalogId: catalog.id, name: 'dev', title: 'Dev' });
      const app = await createApp(t.store.db, { consumerOrgId: corg.id, title: 'App', description: '' });
      const gold = plans.find((p) => p.name === 'gold')!;
      const sub = await createSubscription(t.store.db, {
        appId: app.id,
        productId: product.id,
        planId: gold.id,
        state: 'pending',
      });

      const again = await t.store.transaction((trx) =>
        upsertProduct(
          trx,
          productInput(catalog.id, api.id, {
            title: 'Accessories v2',
            plans: [productInput(catalog.id, api.id).plans[0]],
          }),
        ),
      );
      assert.equal(again.created, false);
      assert.equal(again.product.id, product.id);
      const after = await listPlans(t.store.db, product.id);
      assert.equal(after.find((p) => p.name === 'silver')?.id, plans.find((p) => p.name === 'silver')?.id);
      const details = await listSubscriptionDetails(t.store.db, { appId: app.id });
      assert.equal(details.find((d) => d.id === sub.id)?.state, 'cancelled');
      assert.deepEqual(
        (await listProductApis(t.store.db, product.id)).map((a) => a.api_key),
        ['logistics'],
      );
    });

    test('snapshot data holds published products, online apis, credentials and live subscriptions only', async () => {
      const org = await createOrg(t.store.db, { name: 'snap-org', title: 'S' });
      const catalog = await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' });
      const api = await insertApi(t.store.db, {
        orgId: org.id,
        name: 'snapapi',
        version: '1.0.0',
        title: 's',
        basePath: '/s',
        document: {},
      });
      const { product } = await t.store.transaction((trx) =>
        upsertProduct(trx, productInput(catalog.id, api.id, { name: 'snapprod' })),
      );
      let data = await loadSnapshotData(t.store.db);
      assert.equal(
        data.products.some((p) => p.id === product.id),
        false,
        'staged products are not in the snapshot',
      );

      await setProductState(t.store.db, product.id, 'published');
      data = await loadSnapshotData(t.store.db);
      assert.equal(
        data.products.some((p) => p.id === product.id),
        true,
      );
      assert.equal(
        data.apis.some((a) => a.id === api.id),
        false,
        'offline apis are not in the snapshot',
      );
      await setApiState(t.store.db, api.id, 'online');

      const corg = await createConsumerOrg(t.store.db, {
        catalogId: catalog.id,
        name: 'snapdev',
        title: 'Dev',
      });
      const user = await createPortalUser(t.store.db, {
        catalogId: catalog.id,
        consumerOrgId: corg.id,
        email: 'Dev@Example.com',
        name: 'Dev',
        passwordHash: 'x',
      });
      assert.equal((await findPortalUserByEmail(t.store.db, catalog.id, 'dev@example.COM'))?.id, user.id);
      const app = await createApp(t.store.db, { consumerOrgId: corg.id, title: 'App', description: '' });
      const issued = await addCredential(t.store.db, app.id);
      assert.match(issued.credential.client_id, /^[0-9a-f]{32}$/);
      assert.equal(issued.credential.secret_hash.includes(issued.clientSecret), false);
      const silver = (await listPlans(t.store.db, product.id)).find((p) => p.name === 'silver')!;
      const sub = await createSubscription(t.store.db, {
        appId: app.id,
        productId: product.id,
        planId: silver.id,
        state: 'active',
      });

      data = await loadSnapshotData(t.store.db);
      assert.equal(
        data.apis.some((a) => a.id === api.id),
        true,
      );
      const credential = data.credentials.find((c) => c.client_id === issued.credential.client_id);
      assert.ok(credential);
      assert.equal(secretMatches(issued.clientSecret, credential.secret_hash), true);
      assert.equal(data.subscriptions.find((s) => s.id === sub.id)?.state, 'active');

      const newSecret = await resetCredentialSecret(t.store.db, issued.credential.id);
      data = await loadSnapshotData(t.store.db);
      const rotated = data.credentials.find((c) => c.client_id === issued.credential.client_id)!;
      assert.equal(secretMatches(issued.clientSecret, rotated.secret_hash), false);
      assert.equal(secretMatches(newSecret, rotated.secret_hash), true);

      await setSubscriptionState(t.store.db, sub.id, 'cancelled');
      data = await loadSnapshotData(t.store.db);
      assert.equal(
        data.subscriptions.some((s) => s.id === sub.id),
        false,
      );
    });

    test('an app is found only through its own consumer org, and deleting it removes its credentials', async () => {
      const org = await createOrg(t.store.db, { name: 'iso-org', title: 'I' });
      const catalog = await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' });
      const mine = await createConsumerOrg(t.store.db, {
        catalogId: catalog.id,
        name: 'mine',
        title: 'Mine',
      });
      const theirs = await createConsumerOrg(t.store.db, {
        catalogId: catalog.id,
        name: 'theirs',
        title: 'Theirs',
      });
      const app = await createApp(t.store.db, { consumerOrgId: mine.id, title: 'Mine', description: '' });
      const issued = await addCredential(t.store.db, app.id);
      assert.equal((await findApp(t.store.db, mine.id, app.id))?.id, app.id);
      assert.equal(await findApp(t.store.db, theirs.id, app.id), undefined);
      await t.store.transaction((trx) => deleteApp(trx, app.id));
      const data = await loadSnapshotData(t.store.db);
      assert.equal(
        data.credentials.some((c) => c.client_id === issued.credential.client_id),
        false,
      );
    });

    test('sessions are found by token only while live, and deleted on sign-out', async () => {
      const live = await createSession(t.store.db, { kind: 'portal', userId: 'u1', ttlMs: 60_000 });
      const expired = await createSession(t.store.db, { kind: 'portal', userId: 'u1', ttlMs: -1 });
      assert.equal((await findSession(t.store.db, live.token, ['portal']))?.user_id, 'u1');
      assert.equal(await findSession(t.store.db, live.token, ['provider']), undefined);
      assert.equal(await findSession(t.store.db, expired.token, ['portal']), undefined);
      await deleteSession(t.store.db, live.token);
      assert.equal(await findSession(t.store.db, live.token, ['portal']), undefined);
    });

    test('snapshot data read consistently does not see a commit made between its queries', async () => {
      const seen = await t.store.consistentRead(async (trx) => {
        const first = await loadSnapshotData(trx);
        // Another connection commits while the read is open (on SQLite the same handle would
        // join the transaction, so the commit there goes through a second store on the file).
        const other = t.store.dialect === 'postgres' ? t.store : await openStore(t.url);
        await recordChange(other.db, 'api');
        if (other !== t.store) await other.close();
        const second = await loadSnapshotData(trx);
        return [first.change, second.change];
      });
      assert.equal(seen[0], seen[1]);
      assert.equal(await latestChange(t.store.db), seen[0] + 1);
    });

    test('the change counter grows', async () => {
      const before = await latestChange(t.store.db);
      await recordChange(t.store.db, 'product-state');
      assert.equal(await latestChange(t.store.db), before + 1);
    });

    test('activity events are written in batches and aggregated by dimension, time and latency', async () => {
      const events = Array.from({ length: 1500 }, (_, i) =>
        event({
          ts: 1_700_000_000_000 + i * 1000,
          status: i % 10 === 0 ? 500 : 200,
          latency_ms: i % 100,
          app_id: i % 2 ? 'odd' : 'even',
          app_name: i % 2 ? 'Odd' : 'Even',
        }),
      );
      await t.store.transaction((trx) => insertEvents(trx, events));
      const byApp = await countBy(t.store.db, { apiName: 'logistics' }, 'app_id');
      assert.deepEqual(byApp.map((r) => [r.key, r.labels.app_name, Number(r.calls)]).sort(), [
        ['even', 'Even', 750],
        ['odd', 'Odd', 750],
      ]);
      const buckets = await callsOverTime(t.store.db, { apiName: 'logistics' }, 60_000);
      assert.equal(
        buckets.reduce((sum, b) => sum + Number(b.calls), 0),
        1500,
      );
      assert.equal(
        buckets.reduce((sum, b) => sum + Number(b.errors), 0),
        150,
      );
      // A short window reads the events: nearest rank over 1500 latencies 0..99 (15 of each).
      const exact = await latencyPercentiles(t.store.db, {
        apiName: 'logistics',
        fromTs: 1_700_000_000_000,
        toTs: 1_700_000_000_000 + 3_600_000,
      });
      assert.deepEqual(exact, { count: 1500, p50: 49, p90: 89, p99: 98 });
      // No window reads the hourly rollups: each percentile is its histogram bucket's upper bound.
      const approximate = await latencyPercentiles(t.store.db, { apiName: 'logistics' });
      assert.deepEqual(approximate, { count: 1500, p50: 50, p90: 100, p99: 100 });
      const rollupByApp = await countBy(
        t.store.db,
        { apiName: 'logistics', fromTs: 1_600_000_000_000, toTs: 1_800_000_000_000 },
        'app_id',
      );
      assert.deepEqual(rollupByApp.map((r) => [r.key, Number(r.calls)]).sort(), [
        ['even', 750],
        ['odd', 750],
      ]);
      const hourly = await callsOverTime(t.store.db, { apiName: 'logistics' }, 3_600_000);
      assert.equal(
        hourly.reduce((sum, b) => sum + Number(b.calls), 0),
        1500,
      );
      assert.equal(
        hourly.reduce((sum, b) => sum + Number(b.errors), 0),
        150,
      );
      const latest = await listEvents(t.store.db, { apiName: 'logistics' }, 2);
      assert.equal(latest[0].ts, 1_700_000_000_000 + 1499 * 1000);
      assert.equal(await purgeEvents(t.store.db, 1_700_000_000_000 + 500 * 1000), 500);
    });

    test('issue-16: same-named apps and plans of two consumer orgs count apart, by id, in events and rollups', async () => {
      const scope = { org_name: 'issue16', catalog_name: 'sandbox', ts: 1_710_000_000_000 };
      const walker = (org: string, calls: number) =>
        Array.from({ length: calls }, () =>
          event({
            ...scope,
            app_id: `app-${org}`,
            app_name: 'Walker Shop',
            consumer_org_id: `co-${org}`,
            consumer_org_name: org,
            plan_id: `plan-${org}`,
            plan_name: 'silver',
          }),
        );
      await t.store.transaction((trx) => insertEvents(trx, [...walker('org-a', 3), ...walker('org-b', 5)]));
      const short = { orgName: 'issue16', fromTs: scope.ts - 60_000, toTs: scope.ts + 60_000 };
      const long = { orgName: 'issue16', fromTs: scope.ts - 7 * 86_400_000, toTs: scope.ts + 60_000 };
      for (const filter of [short, long]) {
        const apps = await countBy(t.store.db, filter, 'app_id');
        const shown = apps.map((r) => [r.key, r.labels.app_name, r.labels.consumer_org_name, r.calls]);
        assert.deepEqual(shown, [
          ['app-org-b', 'Walker Shop', 'org-b', 5],
          ['app-org-a', 'Walker Shop', 'org-a', 3],
        ]);
        const plans = await countBy(t.store.db, filter, 'plan_id');
        assert.deepEqual(
          plans.map((r) => [r.key, r.calls]),
          [
            ['plan-org-b', 5],
            ['plan-org-a', 3],
          ],
        );
        const orgs = await countBy(t.store.db, filter, 'consumer_org_id');
        assert.deepEqual(
          orgs.map((r) => [r.key, r.labels.consumer_org_name, r.calls]),
          [
            ['co-org-b', 'org-b', 5],
            ['co-org-a', 'org-a', 3],
          ],
        );
      }
    });

    test("issue-16: a subscription's calls in the current window, from the rollups or the events, without 429s", async () => {
      const hourStart = 1_720_000_800_000 - (1_720_000_800_000 % 3_600_000);
      const sub = (ts: number, status = 200) =>
        event({
          org_name: 'issue16u',
          ts,
          status,
          subscription_id: 'sub-u',
          // The plan limit's own refusal (an assembly rate limit's 429 counts: test/store/plan-usage.test.ts).
          error_name: status === 429 ? 'GW_RATE_LIMIT' : '',
        });
      const events = [
        sub(hourStart - 1000),
        sub(hourStart + 1000),
        sub(hourStart + 120_000),
        sub(hourStart + 130_000, 429),
        sub(hourStart + 140_000, 500),
      ];
      await t.store.transaction((trx) => insertEvents(trx, events));
      // An hour window read from the rollups: the call before the hour and the 429 do not count.
      assert.equal(await subscriptionCallsSince(t.store.db, 'sub-u', hourStart), 3);
      // A minute window (not on an hour) reads the events.
      assert.equal(await subscriptionCallsSince(t.store.db, 'sub-u', hourStart + 120_000), 2);
      assert.equal(await subscriptionCallsSince(t.store.db, 'other', hourStart), 0);
    });
  });
}

for (const backend of storeBackends) {
  describe(`housekeeping on ${backend.name}`, () => {
    test('deletes expired OAuth revocations, codes and refresh tokens, and keeps live ones', async () => {
      const { housekeep } = await import('../../src/management/housekeeping.ts');
      const oauth = await import('../../src/store/oauth.ts');
      const t = await backend.open();
      try {
        const now = Math.floor(Date.now() / 1000);
        const owner = {
          grant_id: 'g',
          provider_id: 'p',
          catalog_id: 'c',
          client_id: 'app',
          scope: 'read',
          username: 'alice',
        };
        const code = {
          ...owner,
          redirect_uri: 'https://app.example/cb',
          redirect_uri_named: 1,
          challenge: null,
          challenge_method: null,
        };
        for (const [suffix, expires_at] of [
          ['old', now - 10],
          ['live', now + 600],
        ] as const) {
          await oauth.insertRevocation(t.store.db, `jti-${suffix}`, expires_at);
          await oauth.insertCode(t.store.db, { ...code, code_hash: `code-${suffix}`, expires_at });
          await oauth.insertRefreshToken(t.store.db, {
            ...owner,
            token_hash: `refresh-${suffix}`,
            expires_at,
          });
        }
        const pino = (await import('pino')).default;
        const deleted = await housekeep(
          { store: t.store, logger: pino({ level: 'silent' }), retentionDays: 0 },
          now * 1000,
        );
        assert.equal(deleted.oauth, 3);
        assert.deepEqual(await oauth.loadRevocations(t.store.db, 0), ['jti-live']);
        assert.equal(await oauth.findRefreshToken(t.store.db, 'refresh-old'), undefined);
        assert.equal((await oauth.findRefreshToken(t.store.db, 'refresh-live'))?.scope, 'read');
        assert.equal(await oauth.takeCode(t.store.db, 'code-old', 'app'), undefined);
        assert.equal((await oauth.takeCode(t.store.db, 'code-live', 'app'))?.first, true);
      } finally {
        await t.dispose();
      }
    });

    test('deletes activity events past the retention period and expired sessions, and keeps the rest', async () => {
      const { housekeep } = await import('../../src/management/housekeeping.ts');
      const t = await backend.open();
      try {
        const now = 1_800_000_000_000;
        const day = 86_400_000;
        await insertEvents(t.store.db, [
          event({ ts: now - 31 * day, tx_id: 'old' }),
          event({ ts: now - 29 * day, tx_id: 'recent' }),
        ]);
        await createSession(t.store.db, { kind: 'portal', userId: 'u', ttlMs: -1000 });
        const live = await createSession(t.store.db, { kind: 'portal', userId: 'u', ttlMs: 60_000 });
        const pino = (await import('pino')).default;
        const deleted = await housekeep({ store: t.store, logger: pino({ level: 'silent' }), retentionDays: 30 }, now);
        assert.deepEqual(deleted, { events: 1, sessions: 1, oauth: 0 });
        assert.deepEqual(
          (await listEvents(t.store.db, {}, 10)).map((e) => e.tx_id),
          ['recent'],
        );
        assert.ok(await findSession(t.store.db, live.token, ['portal']));
        assert.deepEqual(
          await housekeep({ store: t.store, logger: pino({ level: 'silent' }), retentionDays: 0 }, now),
          { events: 0, sessions: 0, oauth: 0 },
        );
      } finally {
        await t.dispose();
      }
    });
  });
}

describe('activity events on SQLite through prepared statements', () => {
  test('calls are stored apart from their scopes, and queries by API find the scopes first and the calls by scope and time', async () => {
    const t = await storeBackends[0].open();
    try {
      const sqlite = t.store.sqlite!;
      const indexes = (table: string) =>
        (
          sqlite.prepare(`select name from sqlite_master where type = 'index' and tbl_name = ?`).all(table) as Array<{
            name: string;
          }>
        )
          .map((r) => r.name)
          .sort();
      assert.deepEqual(indexes('activity_calls'), ['activity_calls_scope_ts', 'activity_calls_ts_tx']);
      assert.equal(indexes('activity_scopes').length, 1, 'the unique key of all its columns');
      const view = sqlite.prepare(`select type from sqlite_master where name = 'activity_events'`).get() as {
        type: string;
      };
      assert.equal(view.type, 'view');
      const plan = sqlite
        .prepare(
          `explain query plan select * from activity_events where org_name = ? and catalog_name = ? and api_name = ? and ts >= ? order by ts desc limit 25`,
        )
        .all('acme', 'sandbox', 'orders', 0) as Array<{ detail: string }>;
      const steps = plan.map((row) => row.detail).join('\n');
      assert.match(
        steps,
        /SEARCH s USING COVERING INDEX sqlite_autoindex_activity_scopes_1 \(org_name=\? AND catalog_name=\? AND api_name=\?\)/,
      );
      assert.match(steps, /SEARCH c USING INDEX activity_calls_scope_ts \(scope_id=\? AND ts>\?\)/);
    } finally {
      await t.dispose();
    }
  });

  test('a call row and a scope hold the values in the order of their columns', async () => {
    const { callColumns, callValues, scopeColumns, scopeValues } = await import('../../src/store/analytics-writes.ts');
    const named = Object.fromEntries(
      [...callColumns, ...scopeColumns].map((column) => [column, `value of ${column}`]),
    ) as unknown as NewActivityEvent;
    assert.deepEqual(
      callValues(named),
      callColumns.map((column) => `value of ${column}`),
    );
    assert.deepEqual(
      scopeValues(named),
      scopeColumns.map((column) => `value of ${column}`),
    );
  });

  test('write the same events and rollups as the generic path', async () => {
    const { insertEventsSqlite } = await import('../../src/store/analytics-writes.ts');
    const generic = await storeBackends[0].open();
    const prepared = await storeBackends[0].open();
    try {
      const events = Array.from({ length: 300 }, (_, i) =>
        event({
          ts: 1_700_000_000_000 + i * 60_000,
          tx_id: `t${i}`,
          status: i % 7 === 0 ? 429 : 200,
          latency_ms: (i * 37) % 900,
          request_body: i % 2 ? '{"a":1}' : null,
        }),
      );
      await generic.store.transaction((trx) => insertEvents(trx, events));
      insertEventsSqlite(prepared.store.sqlite!, events.slice(0, 150));
      insertEventsSqlite(prepared.store.sqlite!, events.slice(150));
      const rows = async (t: TestStore) => (await listEvents(t.store.db, {}, 1000)).map(({ id: _id, ...rest }) => rest);
      assert.deepEqual(await rows(prepared), await rows(generic));
      const rollup = (t: TestStore) =>
        t.store.db.selectFrom('activity_rollup').selectAll().orderBy('bucket_ts').orderBy('status').execute();
      assert.deepEqual(await rollup(prepared), await rollup(generic));
      assert.equal(
        (await rollup(prepared)).reduce((sum, r) => sum + Number(r.calls), 0),
        300,
      );
    } finally {
      await generic.dispose();
      await prepared.dispose();
    }
  });
});

describe('subscription indexes on SQLite', () => {
  test("a reload's reads of live subscriptions, a plan's and a catalog's pending ones search an index, not a scan or a sort", async () => {
    const t = await storeBackends[0].open();
    try {
      const sqlite = t.store.sqlite!;
      const steps = (query: string, ...values: string[]) =>
        (sqlite.prepare(`explain query plan ${query}`).all(...values) as Array<{ detail: string }>)
          .map((row) => row.detail)
          .join('\n');
      // The query of src/store/snapshot-data.ts for the products whose stamp changed.
      const live = steps(
        `select id, app_id, product_id, plan_id, state from subscriptions where state in (?, ?) and product_id in (?, ?)`,
        'active',
        'pending',
        'p1',
        'p2',
      );
      assert.match(live, /SEARCH subscriptions USING INDEX subscriptions_product_state \(product_id=\? AND state=\?\)/);
      const ofPlan = steps(`select id from subscriptions where plan_id = ?`, 'plan');
      assert.match(ofPlan, /SEARCH subscriptions USING INDEX subscriptions_plan \(plan_id=\?\)/);
      // A read of every live subscription, in pages by id: the primary key, no sort per page.
      const page = steps(
        `select id from subscriptions where state in (?, ?) and id > ? order by id limit 2000`,
        'active',
        'pending',
        '',
      );
      assert.match(page, /SEARCH subscriptions USING INDEX sqlite_autoindex_subscriptions_1 \(id>\?\)/);
      assert.doesNotMatch(page, /TEMP B-TREE/);
      // A catalog's pending subscriptions: through its products.
      const pending = steps(
        `select s.id from subscriptions s join products p on p.id = s.product_id where p.catalog_id = ? and s.state = ?`,
        'cat',
        'pending',
      );
      assert.match(pending, /SEARCH s USING INDEX subscriptions_product_state \(product_id=\? AND state=\?\)/);
    } finally {
      await t.dispose();
    }
  });
});

describe('store transactions on SQLite beside another writer', () => {
  // The analytics writer thread writes the same file on its own connection. A deferred
  // transaction that has read cannot wait for that writer's lock: SQLite answers SQLITE_BUSY at
  // once, without the busy timeout (seen as a failed sign-up under load).
  test('a transaction that reads, then writes, waits for the other writer and commits', async () => {
    const t = await storeBackends[0].open();
    let holder: Worker | undefined;
    try {
      await sql`create table probe (owner text)`.execute(t.store.db);
      // Another connection, in another thread, holds the write lock for 300 ms.
      holder = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
        const db = new (require(workerData.driver))(workerData.file);
        db.exec('begin immediate');
        db.exec("insert into probe (owner) values ('other')");
        parentPort.postMessage('locked');
        setTimeout(() => { db.exec('commit'); db.close(); parentPort.postMessage('committed'); }, 300);`,
        {
          eval: true,
          workerData: {
            driver: createRequire(import.meta.url).resolve('better-sqlite3'),
            file: t.url.slice('sqlite:'.length),
          },
        },
      );
      const messages: unknown[] = [];
      const next = () => new Promise((resolve) => holder!.once('message', (m) => resolve(messages.push(m))));
      await next();
      assert.deepEqual(messages, ['locked']);
      const committed = next();
      await t.store.transaction(async (trx) => {
        const { rows } = await sql<{ n: number }>`select count(*) as n from probe`.execute(trx);
        await sql`insert into probe (owner) values (${`read ${rows[0].n}`})`.execute(trx);
      });
      await committed;
      const { rows } = await sql<{ owner: string }>`select owner from probe order by rowid`.execute(t.store.db);
      assert.deepEqual(
        rows.map((r) => r.owner),
        ['other', 'read 1'],
        'the transaction began after the other commit: it read that row',
      );
    } finally {
      await holder?.terminate();
      await t.dispose();
    }
  });
});
