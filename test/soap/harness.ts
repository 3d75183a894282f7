/**
 * The real platform for SOAP tests: a gateway on a free port over a temporary SQLite store,
 * with one provider org, a developer app, and a helper that imports an API (YAML/JSON text or
 * a generated document), brings it online, publishes it in a product and subscribes the app.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform } from '../../src/platform.ts';

export interface SoapPlatform {
  platform: Platform;
  gateway: string;
  /** Imports, activates and publishes an API; returns the base URL of its basePath and a subscribed client id. */
  publish(input: {
    text: string;
    file: string;
    attachments?: Record<string, string>;
  }): Promise<{ base: string; clientId: string }>;
  close(): Promise<void>;
}

let counter = 0;

/** Starts the gateway role on port 0 with a temporary store. */
export async function startSoapPlatform(): Promise<SoapPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-soap-'));
  const settings = loadSettings(
    {
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      PORTICO_DRAIN_SECONDS: '0',
    },
    { dataDir },
  );
  const platform = await startPlatform(settings, pino({ level: 'silent' }), 'gateway');
  const services = platform.services;
  const consumerServices = platform.consumerServices;
  const { orgId, sandbox } = await services.ensureOrg('soaptest', 'SOAP tests');
  const { user } = await consumerServices.signUp(sandbox.id, {
    email: 'dev@example.com',
    password: 'portico-test-1',
    name: 'Dev',
    orgTitle: 'Dev Org',
  });
  const app = await consumerServices.createApp(user.consumer_org_id, { title: 'SOAP test app' });
  const clientId = app.credential.client_id as string;
  return {
    platform,
    gateway: platform.urls.gateway!,
    async publish(input) {
      const imported = await services.importApi(orgId, { ...input, replace: true });
      await services.setApiState(orgId, imported.api.name, imported.api.version, 'online');
      const product = `soap-product-${++counter}`;
      const text = [
        'product: 1.0.0',
        `info: { name: ${product}, title: ${product}, version: 1.0.0 }`,
        'visibility: { view: { type: public, enabled: true }, subscribe: { type: authenticated, enabled: true } }',
        'plans: { default: { title: Default, approval: false, rate-limits: { default: { value: 1000/1minute } } } }',
        `apis: { api: { name: '${imported.api.name}:${imported.api.version}' } }`,
      ].join('\n');
      const published = await services.putProduct(orgId, 'sandbox', {
        text,
        file: `${product}.yaml`,
        state: 'published',
      });
      await consumerServices.subscribe(user.consumer_org_id, {
        appId: app.app.id,
        productId: published.product.id,
        planName: 'default',
      });
      await platform.gateway?.reload();
      return { base: `${platform.urls.gateway}/soaptest/sandbox${imported.definition.basePath}`, clientId };
    },
    async close() {
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
