/**
 * The set-up the issue-15 cluster tests share: the accessories example published on a
 * PostgreSQL database by a management process, its sample backends, and subscriptions made
 * through the services (as cluster.test.ts does).
 */
import { readFileSync } from 'node:fs';
import { startSamples } from '../../samples/index.ts';
import { ConsumerServices } from '../../src/services/consumer-services.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import type { Store } from '../../src/store/store.ts';
import { startPortico } from '../helpers/processes.ts';
import type { PorticoProcess } from '../helpers/processes.ts';

const examples = new URL('../../examples/accessories/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, examples), 'utf8');

export interface AccessoriesCluster {
  management: PorticoProcess;
  /** Calls the management API as the admin. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** A new consumer org with an app subscribed to `plan`; returns its client id. */
  newApp(plan: string, title: string): Promise<{ clientId: string; subscriptionId: string }>;
  close(): Promise<void>;
}

/** Starts the samples and a management node on `databaseUrl`, and publishes the example. */
export async function startAccessories(
  databaseUrl: string,
  store: Store,
  env: Record<string, string> = {},
): Promise<AccessoriesCluster> {
  const samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  const management = await startPortico(
    ['serve', '--role', 'management'],
    {
      PORTICO_DATABASE_URL: databaseUrl,
      PORTICO_ORG: 'demo',
      PORTICO_ADMIN_USER: 'admin',
      PORTICO_ADMIN_PASSWORD: 'admin-pass-123',
      ...env,
    },
    ['management'],
  );
  const login = await fetch(`${management.urls.management}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-pass-123' }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${management.urls.management}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
  const port = (name: keyof typeof samples.urls) => new URL(samples.urls[name]).port;
  const retarget = (text: string) =>
    text
      .replaceAll('127.0.0.1:9082', `127.0.0.1:${port('shipping')}`)
      .replaceAll('127.0.0.1:9083', `127.0.0.1:${port('geocoder')}`)
      .replaceAll('127.0.0.1:9081', `127.0.0.1:${port('financing')}`);
  for (const file of ['logistics.yaml', 'financing.yaml']) {
    const created = await api('POST', '/api/apis', { document: retarget(read(file)), file, state: 'online' });
    if (created.status !== 201)
      throw new Error(`publishing ${file}: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const product = {
    document: read('accessories-product.yaml'),
    file: 'accessories-product.yaml',
    state: 'published',
  };
  const published = await api('POST', '/api/catalogs/sandbox/products', product);
  if (published.status !== 201) throw new Error(`publishing the product: ${published.status}`);
  const services = new ProviderServices(store);
  const consumer = new ConsumerServices(services.store, services.bus, services.signInLimiter);
  const orgId = (await services.ensureOrg('demo')).orgId;
  return {
    management,
    api,
    async newApp(plan, title) {
      const catalog = await services.catalog(orgId, 'sandbox');
      await consumer.signUp(catalog.id, {
        email: `${title}@example.com`,
        password: 'dev-pass-1234',
        orgTitle: title,
      });
      const org = (await findConsumerOrgByName(store.db, catalog.id, title.toLowerCase()))!;
      const { app, credential } = await consumer.createApp(org.id, { title });
      const found = await services.product(orgId, 'sandbox', 'accessories', '1.0.0');
      const subscription = await consumer.subscribe(org.id, {
        appId: app.id,
        productId: found.id,
        planName: plan,
      });
      return { clientId: credential.client_id, subscriptionId: String(subscription.id) };
    },
    async close() {
      await management.stop('SIGKILL');
      await samples.close();
    },
  };
}

/** Polls until `check` holds; returns the milliseconds it took, or throws after `ms`. */
export async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (await check().catch(() => false)) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not within ${ms} ms`);
}
