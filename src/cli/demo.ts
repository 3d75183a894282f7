/**
 * `portico demo` (`npm start`): the Accessories scenario on one machine, offline. Starts the
 * sample backends and the platform on 127.0.0.1, applies `examples/accessories/` (logistics
 * imported then activated, both products published to `sandbox`), creates the demo provider
 * user, developer and an app subscribed to Gold (approved), and prints ready `curl` lines.
 * Running it again reuses the store and duplicates nothing.
 */
import type { Logger } from 'pino';
import { startSamples } from '../../samples/index.ts';
import type { Settings } from '../config/config.ts';
import { PorticoError } from '../errors.ts';
import { readDefinitionFolder } from '../management/folder.ts';
import type { Services } from '../management/services.ts';
import { startPlatform } from '../platform.ts';
import type { Platform } from '../platform.ts';
import * as consumers from '../store/consumers.ts';
import { findProviderUser } from '../store/orgs.ts';
import { demo } from './demo-scenario.ts';

export { demo };

export interface DemoHandle {
  platform: Platform;
  clientId: string;
  /** Present only when the app was created by this run (secrets are stored hashed). */
  clientSecret?: string;
  curlLines: string[];
  close(): Promise<void>;
}

/** Rewrites the example files' sample-service addresses to where the samples really listen. */
function retarget(text: string, urls: Record<string, number>): string {
  let out = text;
  for (const [name, port] of Object.entries(urls)) {
    const original = demo.samplePorts[name as keyof typeof demo.samplePorts];
    if (original !== port) out = out.replaceAll(`127.0.0.1:${original}`, `127.0.0.1:${port}`);
  }
  return out;
}

async function applyExamples(services: Services, orgId: string, ports: Record<string, number>, logger: Logger, dir: string): Promise<void> {
  const folder = readDefinitionFolder(dir);
  const attachments = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([n, t]) => [n, retarget(t, ports)]));
  for (const doc of folder.apis) {
    // Imported offline, as the spec says; then activated for the demo.
    const imported = await services.importApi(orgId, { text: retarget(doc.text, ports), file: doc.file, attachments: attachments(doc.attachments), replace: true });
    if (imported.api.state !== 'online') await services.setApiState(orgId, imported.api.name, imported.api.version, 'online');
    logger.debug({ api: `${imported.api.name}:${imported.api.version}`, created: imported.created }, 'demo api applied');
  }
  for (const doc of folder.products) {
    await services.putProduct(orgId, demo.catalog, { text: doc.text, file: doc.file, state: 'published', attachments: attachments(doc.attachments) });
  }
}

async function ensureDeveloperApp(services: Services, catalogId: string): Promise<{ clientId: string; clientSecret?: string; consumerOrgId: string }> {
  const db = services.store.db;
  let user = await consumers.findPortalUserByEmail(db, catalogId, demo.developer.email);
  if (!user) {
    user = (await services.signUp(catalogId, { email: demo.developer.email, password: demo.developer.password, name: demo.developer.name, orgTitle: demo.developer.org })).user;
  }
  const consumerOrgId = user.consumer_org_id;
  const existing = (await consumers.listApps(db, consumerOrgId)).find((a) => a.title === demo.appTitle);
  if (existing) {
    const [credential] = await consumers.listCredentials(db, existing.id);
    return { clientId: credential.client_id, consumerOrgId };
  }
  const created = await services.createApp(consumerOrgId, { title: demo.appTitle, description: 'Subscribed to Accessories Gold (approved) by the demo' });
  return { clientId: created.credential.client_id, clientSecret: created.clientSecret, consumerOrgId };
}

async function ensureSubscription(services: Services, orgId: string, consumerOrgId: string, clientId: string, product: string, version: string, plan: string): Promise<void> {
  const db = services.store.db;
  const row = await services.product(orgId, demo.catalog, product, version);
  const credential = await db.selectFrom('app_credentials').select('app_id').where('client_id', '=', clientId).executeTakeFirstOrThrow();
  const live = (await consumers.listSubscriptionDetails(db, { appId: credential.app_id })).find(
    (s) => s.product_id === row.id && (s.state === 'active' || s.state === 'pending'),
  );
  const subscription = live ?? (await services.subscribe(consumerOrgId, { appId: credential.app_id, productId: row.id, planName: plan }));
  if (subscription.state === 'pending') await services.decideSubscription(orgId, demo.catalog, subscription.id, 'approve');
}

/** Starts the whole demo; `settings` decide ports and store. */
export async function startDemo(settings: Readonly<Settings>, logger: Logger, samplePorts = demo.samplePorts, examplesDir = demo.examples): Promise<DemoHandle> {
  let samples: Awaited<ReturnType<typeof startSamples>>;
  try {
    samples = await startSamples(samplePorts, '127.0.0.1');
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      const port = (error as { port?: number }).port ?? '';
      throw new PorticoError('PORT_IN_USE', { port, setting: 'PORTICO_SAMPLE_PORTS (financing,shipping,geocoder,inventory)' });
    }
    throw error;
  }
  let platform: Platform;
  try {
    platform = await startPlatform(settings, logger, 'all');
  } catch (error) {
    await samples.close();
    throw error;
  }
  try {
    const services = platform.services;
    const { orgId, sandbox } = await services.ensureOrg(demo.org, 'Demo Provider');
    if (!(await findProviderUser(services.store.db, demo.provider.username))) {
      await services.addProviderUser(orgId, demo.provider);
    }
    const ports = Object.fromEntries(Object.entries(samples.urls).map(([name, url]) => [name, Number(new URL(url).port)]));
    await applyExamples(services, orgId, ports, logger, examplesDir);
    const app = await ensureDeveloperApp(services, sandbox.id);
    await ensureSubscription(services, orgId, app.consumerOrgId, app.clientId, 'accessories', '1.0.0', 'gold');
    await ensureSubscription(services, orgId, app.consumerOrgId, app.clientId, 'inventory', '1.0.0', 'default');
    await platform.gateway?.reload();
    const base = `${platform.urls.gateway}/${demo.org}/${demo.catalog}`;
    const header = `-H 'X-IBM-Client-Id: ${app.clientId}'`;
    const curlLines = [
      `curl ${header} '${base}/logistics/shipping?zip=90210'`,
      `curl ${header} '${base}/logistics/stores?zip=90210'`,
      `curl ${header} '${base}/financing/calculate?amount=10000&duration=36&rate=5'`,
      `curl ${header} '${base}/api/items'`,
    ];
    return {
      platform,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      curlLines,
      async close() {
        await platform.close();
        await samples.close();
      },
    };
  } catch (error) {
    await platform.close();
    await samples.close();
    throw error;
  }
}
