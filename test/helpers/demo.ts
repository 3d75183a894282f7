/**
 * The Accessories scenario for tests: `startDemo` (the same code `npm start` runs) on free
 * ports with a temporary SQLite store, plus helpers to make apps on a given plan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { demo, startDemo } from '../../src/cli/demo.ts';
import type { DemoHandle } from '../../src/cli/demo.ts';
import { loadSettings } from '../../src/config/config.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';

export interface TestDemo {
  handle: DemoHandle;
  /** `http://127.0.0.1:PORT/demo/sandbox` */
  base: string;
  orgId: string;
  catalogId: string;
  /** A new app in a new consumer org, subscribed to `plan` of `product` (approved when needed). */
  newApp(
    plan: string,
    options?: { product?: string; approve?: boolean },
  ): Promise<{ clientId: string; clientSecret: string; appId: string; subscriptionId: string }>;
  close(): Promise<void>;
}

let counter = 0;

export async function startTestDemo(env: Record<string, string> = {}): Promise<TestDemo> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-demo-'));
  const settings = loadSettings(
    {
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_DRAIN_SECONDS: '0',
      PORTICO_ANALYTICS_FLUSH_MS: '50',
      ...env,
    },
    { dataDir },
  );
  const handle = await startDemo(settings, pino({ level: process.env.PORTICO_TEST_LOG ?? 'silent' }), {
    financing: 0,
    shipping: 0,
    geocoder: 0,
    inventory: 0,
  });
  const services = handle.platform.services;
  const consumerServices = handle.platform.consumerServices;
  const { orgId, sandbox } = await services.ensureOrg(demo.org);
  return {
    handle,
    base: `${handle.platform.urls.gateway}/${demo.org}/${demo.catalog}`,
    orgId,
    catalogId: sandbox.id,
    async newApp(plan, options = {}) {
      counter++;
      const email = `dev${counter}-${process.pid}@example.com`;
      await consumerServices.signUp(sandbox.id, {
        email,
        password: 'dev-pass-1234',
        orgTitle: `Devs ${counter}`,
      });
      const org = (await findConsumerOrgByName(services.store.db, sandbox.id, `devs-${counter}`))!;
      const { app, credential, clientSecret } = await consumerServices.createApp(org.id, {
        title: `App ${counter}`,
      });
      const product = await services.product(orgId, demo.catalog, options.product ?? 'accessories', '1.0.0');
      let subscription = await consumerServices.subscribe(org.id, {
        appId: app.id,
        productId: product.id,
        planName: plan,
      });
      if (subscription.state === 'pending' && options.approve !== false) {
        subscription = await services.decideSubscription(orgId, demo.catalog, subscription.id, 'approve');
      }
      await handle.platform.gateway!.reload();
      return { clientId: credential.client_id, clientSecret, appId: app.id, subscriptionId: subscription.id };
    },
    async close() {
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
