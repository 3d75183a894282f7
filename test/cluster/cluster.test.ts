import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startSamples } from '../../samples/index.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import { ConsumerServices } from '../../src/services/consumer-services.ts';
import { ProviderServices as Services } from '../../src/services/provider-services.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { startPortico, startRelay } from '../helpers/processes.ts';
import { awaitRoomInWindow } from '../ratelimit/helpers.ts';
import type { PorticoProcess, Relay } from '../helpers/processes.ts';

const redisUrl = process.env.PORTICO_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const examples = new URL('../../examples/accessories/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, examples), 'utf8');

async function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

/** Polls until `check` holds for every gateway; returns the time it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check()) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`not within ${ms} ms`);
}

describe('a cluster: three gateway nodes and a management node on PostgreSQL and Redis', () => {
  let db: TestStore;
  let samples: Awaited<ReturnType<typeof startSamples>>;
  let management: PorticoProcess;
  let gateways: PorticoProcess[] = [];
  let token: string;
  let orgId: string;
  let services: Services;
  const extra: PorticoProcess[] = [];
  const relays: Relay[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${management.urls.management}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  const newApp = async (plan: string, title: string) => {
    const catalog = await services.catalog(orgId, 'sandbox');
    const consumer = new ConsumerServices(services.store, services.bus, services.signInLimiter);
    await consumer.signUp(catalog.id, {
      email: `${title}@example.com`,
      password: 'dev-pass-1234',
      orgTitle: title,
    });
    const org = (await findConsumerOrgByName(services.store.db, catalog.id, title.toLowerCase()))!;
    const { app, credential } = await consumer.createApp(org.id, { title });
    const product = await services.product(orgId, 'sandbox', 'accessories', '1.0.0');
    const subscription = await consumer.subscribe(org.id, {
      appId: app.id,
      productId: product.id,
      planName: plan,
    });
    return { clientId: credential.client_id, subscriptionId: subscription.id };
  };

  before(async () => {
    db = await postgresTestStore();
    samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
    const env = { PORTICO_DATABASE_URL: db.url, PORTICO_REDIS_URL: redisUrl };
    management = await startPortico(
      ['serve', '--role', 'management'],
      { ...env, PORTICO_ORG: 'demo', PORTICO_ADMIN_USER: 'admin', PORTICO_ADMIN_PASSWORD: 'admin-pass-123' },
      ['management'],
    );
    const login = await fetch(`${management.urls.management}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin-pass-123' }),
    });
    token = ((await login.json()) as { token: string }).token;
    const port = (name: string) => new URL(samples.urls[name as keyof typeof samples.urls]).port;
    const retarget = (text: string) =>
      text
        .replaceAll('127.0.0.1:9082', `127.0.0.1:${port('shipping')}`)
        .replaceAll('127.0.0.1:9083', `127.0.0.1:${port('geocoder')}`)
        .replaceAll('127.0.0.1:9081', `127.0.0.1:${port('financing')}`);
    assert.equal(
      (
        await api('POST', '/api/apis', {
          document: retarget(read('logistics.yaml')),
          file: 'logistics.yaml',
          state: 'online',
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await api('POST', '/api/apis', {
          document: retarget(read('financing.yaml')),
          file: 'financing.yaml',
          state: 'online',
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await api('POST', '/api/catalogs/sandbox/products', {
          document: read('accessories-product.yaml'),
          file: 'accessories-product.yaml',
          state: 'published',
        })
      ).status,
      201,
    );
    services = new Services(db.store);
    orgId = (await services.ensureOrg('demo')).orgId;
    gateways = await Promise.all(
      [0, 1, 2].map(() => startPortico(['serve', '--role', 'gateway'], env, ['gateway', 'status'])),
    );
  });

  after(async () => {
    await Promise.all([...gateways, ...extra, management].map((p) => p?.stop('SIGKILL')));
    for (const relay of relays) await relay.cut().catch(() => {});
    await samples?.close();
    await db?.dispose();
  });

  test('the Silver limit holds exactly across the three nodes under concurrent load', async () => {
    const app = await newApp('silver', 'Limits');
    const headers = { 'X-IBM-Client-Id': app.clientId };
    await within(5000, async () =>
      (await Promise.all(gateways.map((g) => statusOf(`${g.urls.status}/health`, {})))).every((s) => s === 200),
    );
    // Every node must know the new subscription before the load starts.
    await within(3000, async () => {
      const statuses = await Promise.all(
        gateways.map((g) =>
          fetch(`${g.urls.gateway}/demo/sandbox/logistics/stores?zip=90210`, {
            method: 'OPTIONS',
            headers,
          }).then((r) => r.status),
        ),
      );
      return statuses.every((s) => s !== 503);
    });
    await new Promise((r) => setTimeout(r, 1500));
    // 100/hour counts in windows aligned on the hour: a load that ran across hh:00 could rightly admit 200.
    await awaitRoomInWindow(3_600_000, 60_000);
    const statuses = await Promise.all(
      Array.from({ length: 240 }, (_, i) =>
        statusOf(`${gateways[i % 3].urls.gateway}/demo/sandbox/logistics/stores?zip=90210`, headers),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 100, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 140);
  });

  test('a publish and a revocation reach every node in under a second', async () => {
    const app = await newApp('gold', 'Propagation');
    const headers = { 'X-IBM-Client-Id': app.clientId };
    const url = (g: PorticoProcess) => `${g.urls.gateway}/demo/sandbox/logistics/shipping?zip=90210`;
    const approve = await api('POST', `/api/catalogs/sandbox/subscriptions/${app.subscriptionId}/approve`);
    assert.equal(approve.body.state, 'active');
    const publishMs = await within(1000, async () =>
      (await Promise.all(gateways.map((g) => statusOf(url(g), headers)))).every((s) => s === 200),
    );
    assert.ok(publishMs < 1000, `approval reached every node in ${publishMs} ms`);
    assert.equal((await api('POST', `/api/catalogs/sandbox/subscriptions/${app.subscriptionId}/revoke`)).status, 204);
    const revokeMs = await within(1000, async () =>
      (await Promise.all(gateways.map((g) => statusOf(url(g), headers)))).every((s) => s === 401),
    );
    assert.ok(revokeMs < 1000, `revocation reached every node in ${revokeMs} ms`);
  });

  test('killing one gateway with SIGKILL mid-load loses no stored data and the others keep serving', async () => {
    const app = await newApp('gold', 'Survivors');
    await api('POST', `/api/catalogs/sandbox/subscriptions/${app.subscriptionId}/approve`);
    const headers = { 'X-IBM-Client-Id': app.clientId };
    await within(2000, async () =>
      (
        await Promise.all(
          gateways.map((g) => statusOf(`${g.urls.gateway}/demo/sandbox/logistics/stores?zip=90210`, headers)),
        )
      ).every((s) => s === 200),
    );
    const before = await db.store.db.selectFrom('subscriptions').select(['id', 'state']).orderBy('id').execute();
    const victim = gateways[2];
    const load = Promise.allSettled(
      Array.from({ length: 60 }, () =>
        statusOf(`${victim.urls.gateway}/demo/sandbox/logistics/stores?zip=90210`, headers),
      ),
    );
    await victim.stop('SIGKILL');
    await load;
    const survivors = gateways.slice(0, 2);
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        statusOf(`${survivors[i % 2].urls.gateway}/demo/sandbox/logistics/stores?zip=90210`, headers),
      ),
    );
    assert.deepEqual([...new Set(statuses)], [200]);
    const after = await db.store.db.selectFrom('subscriptions').select(['id', 'state']).orderBy('id').execute();
    assert.deepEqual(after, before);
    assert.equal((await api('GET', '/api/apis')).body.length, 2);
    gateways = survivors;
  });

  test('a node whose Redis is unreachable follows the fail-open / fail-closed setting and says so', async () => {
    const app = await newApp('silver', 'Failover');
    const headers = { 'X-IBM-Client-Id': app.clientId };
    const dead = { PORTICO_DATABASE_URL: db.url, PORTICO_REDIS_URL: 'redis://127.0.0.1:1' };
    const open = await startPortico(['serve', '--role', 'gateway'], { ...dead, PORTICO_RATELIMIT_FAIL_OPEN: 'true' }, [
      'gateway',
      'status',
    ]);
    const closed = await startPortico(
      ['serve', '--role', 'gateway'],
      { ...dead, PORTICO_RATELIMIT_FAIL_OPEN: 'false' },
      ['gateway', 'status'],
    );
    extra.push(open, closed);
    const path = '/demo/sandbox/logistics/stores?zip=90210';
    assert.equal(await statusOf(`${open.urls.gateway}${path}`, headers), 200);
    const refused = await fetch(`${closed.urls.gateway}${path}`, { headers });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '1');
    await refused.arrayBuffer();
    await within(5000, async () => /redis/i.test(open.output()) && /redis/i.test(closed.output()));
    const metrics = async (node: PorticoProcess) => (await fetch(`${node.urls.status}/metrics`)).text();
    assert.match(await metrics(open), /^portico_ratelimit_redis_up 0$/m);
    assert.match(await metrics(open), /^portico_ratelimit_fail_open 1$/m);
    assert.match(await metrics(closed), /^portico_ratelimit_fail_open 0$/m);
  });

  test('a gateway keeps serving when PostgreSQL becomes unreachable after start, and says so on /ready', async () => {
    const app = await newApp('gold', 'Outage');
    await api('POST', `/api/catalogs/sandbox/subscriptions/${app.subscriptionId}/approve`);
    const relay = await startRelay(5432);
    relays.push(relay);
    const url = new URL(db.url);
    url.port = String(relay.port);
    const node = await startPortico(
      ['serve', '--role', 'gateway'],
      { PORTICO_DATABASE_URL: url.toString(), PORTICO_REDIS_URL: redisUrl },
      ['gateway', 'status'],
    );
    extra.push(node);
    const headers = { 'X-IBM-Client-Id': app.clientId };
    const target = `${node.urls.gateway}/demo/sandbox/logistics/stores?zip=90210`;
    await within(3000, async () => (await statusOf(target, headers)) === 200);
    await relay.cut();
    const statuses = await Promise.all(Array.from({ length: 30 }, () => statusOf(target, headers))).catch((error) => {
      throw new Error(`${error.message}\n${node.output()}`);
    });
    assert.deepEqual([...new Set(statuses)], [200]);
    await within(10_000, async () => {
      const ready = (await (await fetch(`${node.urls.status}/ready`)).json()) as {
        storeReachable: boolean;
        status: string;
      };
      return ready.storeReachable === false && ready.status === 'ready';
    });
    assert.equal(await statusOf(target, headers), 200);
  });

  test('a gateway that cannot reach PostgreSQL at start exits with one clear line', async () => {
    await assert.rejects(
      startPortico(['serve', '--role', 'gateway'], { PORTICO_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' }, [
        'gateway',
      ]),
      (error: Error) =>
        /exited with 1/.test(error.message) &&
        /portico: Cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:1\/none/.test(error.message),
    );
  });
});
