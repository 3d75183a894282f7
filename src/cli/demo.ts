/**
 * `portico demo` (`npm start`): the Accessories scenario on one machine, offline. Starts the
 * sample backends and the platform on 127.0.0.1, applies `examples/accessories/` (logistics
 * imported then activated, both products published to `sandbox`), creates and enables the native
 * OAuth provider of `examples/oauth/providers/` and applies `examples/oauth/` (the warehouse API it
 * secures), creates the demo provider user, developer (its address already verified) and an app
 * subscribed to Gold (approved) and to Warehouse, and prints ready `curl` lines, a client
 * credentials token among them. Account email goes to a local SMTP sink whose page lists it.
 * Running it again reuses the store and duplicates nothing.
 */
import type { Logger } from 'pino';
import { startSamples } from '../../samples/index.ts';
import type { Settings } from '../config/config.ts';
import { PorticoError } from '../errors.ts';
import { readFileSync } from 'node:fs';
import { parseText } from '../definitions/parse-text.ts';
import { readDefinitionFolder } from '../management/folder.ts';
import { OAuthProviders } from '../services/oauth-providers.ts';
import type { ConsumerServices } from '../services/consumer-services.ts';
import type { ProviderServices } from '../services/provider-services.ts';
import { startPlatform } from '../platform.ts';
import type { Platform } from '../platform.ts';
import { demo } from './demo-scenario.ts';
import { startMailSink } from './mail-sink.ts';
import type { MailSink } from './mail-sink.ts';

export { demo };

export interface DemoHandle {
  platform: Platform;
  clientId: string;
  /** Present only when the app was created by this run (secrets are stored hashed). */
  clientSecret?: string;
  curlLines: string[];
  /** The demo's SMTP sink and its page; absent when PORTICO_SMTP_URL names a real server. */
  mailSink?: MailSink;
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

async function applyExamples(
  services: ProviderServices,
  orgId: string,
  ports: Record<string, number>,
  logger: Logger,
  dir: string,
): Promise<void> {
  const folder = readDefinitionFolder(dir);
  const attachments = (files: Record<string, string>) =>
    Object.fromEntries(Object.entries(files).map(([n, t]) => [n, retarget(t, ports)]));
  for (const doc of folder.apis) {
    // Imported offline, as the spec says; then activated for the demo.
    const imported = await services.importApi(orgId, {
      text: retarget(doc.text, ports),
      file: doc.file,
      attachments: attachments(doc.attachments),
      replace: true,
    });
    if (imported.api.state !== 'online')
      await services.setApiState(orgId, imported.api.name, imported.api.version, 'online');
    logger.debug(
      { api: `${imported.api.name}:${imported.api.version}`, created: imported.created },
      'demo api applied',
    );
  }
  for (const doc of folder.products) {
    await services.putProduct(orgId, demo.catalog, {
      text: doc.text,
      file: doc.file,
      state: 'published',
      attachments: attachments(doc.attachments),
    });
  }
}

/** Creates (or updates) the demo's OAuth provider from its file and enables it in the catalog. */
async function applyOAuthProvider(services: ProviderServices, orgId: string, file: string): Promise<string> {
  const providers = new OAuthProviders(services);
  const written = parseText(readFileSync(file, 'utf8'), file).value as Record<string, unknown>;
  const name = String(written.name);
  const exists = (await providers.list(orgId)).some((p) => p.name === name);
  if (exists) await providers.update(orgId, name, written);
  else await providers.create(orgId, written);
  const enabled = (await providers.listInCatalog(orgId, demo.catalog)).some((p) => p.name === name);
  if (!enabled) await providers.enable(orgId, demo.catalog, name);
  return name;
}

/** Getting a token with curl, then calling the warehouse API with it (one line each, as printed). */
function oauthCurlLines(base: string, app: DemoApp): string[] {
  const user = `-u '${app.clientId}:${app.clientSecret ?? '<client secret>'}'`;
  const token = `curl ${user} -d grant_type=client_credentials -d scope=stock:read '${base}/oauth/oauth2/token'`;
  const bearer = `$(${token.replace('curl ', 'curl -s ')} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`;
  return [token, `curl -H "Authorization: Bearer ${bearer}" '${base}/warehouse/items'`];
}

interface DemoApp {
  appId: string;
  clientId: string;
  clientSecret?: string;
  consumerOrgId: string;
}

async function ensureDeveloperApp(consumer: ConsumerServices, catalogId: string): Promise<DemoApp> {
  let user = await consumer.portalUserByEmail(catalogId, demo.developer.email);
  if (!user) {
    const { email, password, name, org: orgTitle } = demo.developer;
    user = (await consumer.signUp(catalogId, { email, password, name, orgTitle, verified: true })).user;
  }
  const consumerOrgId = user.consumer_org_id;
  const existing = (await consumer.listApps(consumerOrgId)).find((a) => a.title === demo.appTitle);
  if (existing) {
    const [credential] = await consumer.listCredentials(existing.id);
    return { appId: existing.id, clientId: credential.client_id, consumerOrgId };
  }
  const description = 'Subscribed to Accessories Gold (approved) by the demo';
  const created = await consumer.createApp(consumerOrgId, { title: demo.appTitle, description });
  return {
    appId: created.app.id,
    clientId: created.credential.client_id,
    clientSecret: created.clientSecret,
    consumerOrgId,
  };
}

async function ensureSubscription(
  platform: Platform,
  orgId: string,
  app: DemoApp,
  product: string,
  version: string,
  plan: string,
): Promise<void> {
  const { services, consumerServices } = platform;
  const row = await services.product(orgId, demo.catalog, product, version);
  const live = (await consumerServices.appSubscriptions(app.appId)).find(
    (s) => s.product_id === row.id && (s.state === 'active' || s.state === 'pending'),
  );
  const subscription =
    live ??
    (await consumerServices.subscribe(app.consumerOrgId, {
      appId: app.appId,
      productId: row.id,
      planName: plan,
    }));
  if (subscription.state === 'pending')
    await services.decideSubscription(orgId, demo.catalog, subscription.id, 'approve');
}

/** Starts the whole demo; `settings` decide ports and store. */
export async function startDemo(
  settings: Readonly<Settings>,
  logger: Logger,
  samplePorts = demo.samplePorts,
  examplesDir = demo.examples,
): Promise<DemoHandle> {
  let samples: Awaited<ReturnType<typeof startSamples>>;
  try {
    samples = await startSamples(samplePorts, '127.0.0.1');
  } catch (error) {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      const port = (error as { port?: number }).port ?? '';
      throw new PorticoError('PORT_IN_USE', {
        port,
        setting: 'PORTICO_SAMPLE_PORTS (financing,shipping,geocoder,inventory)',
      });
    }
    throw error;
  }
  // Account email goes to a local sink a newcomer can read, unless a real server is configured.
  let mailSink: MailSink | undefined;
  let platform: Platform;
  try {
    mailSink = settings.smtpUrl ? undefined : await startMailSink();
    platform = await startPlatform(mailSink ? { ...settings, smtpUrl: mailSink.smtpUrl } : settings, logger, 'all');
  } catch (error) {
    await mailSink?.close();
    await samples.close();
    throw error;
  }
  try {
    const services = platform.services;
    const { orgId, sandbox } = await services.ensureOrg(demo.org, 'Demo Provider');
    if (!(await services.providerUserNamed(demo.provider.username))) {
      await services.addProviderUser(orgId, demo.provider);
    }
    const ports = Object.fromEntries(
      Object.entries(samples.urls).map(([name, url]) => [name, Number(new URL(url).port)]),
    );
    await applyExamples(services, orgId, ports, logger, examplesDir);
    await applyOAuthProvider(services, orgId, demo.oauthProviderFile);
    await applyExamples(services, orgId, ports, logger, demo.oauthExamples);
    const app = await ensureDeveloperApp(platform.consumerServices, sandbox.id);
    await ensureSubscription(platform, orgId, app, 'accessories', '1.0.0', 'gold');
    await ensureSubscription(platform, orgId, app, 'inventory', '1.0.0', 'default');
    await ensureSubscription(platform, orgId, app, 'warehouse', '1.0.0', 'default');
    await platform.gateway?.reload();
    const base = `${platform.urls.gateway}/${demo.org}/${demo.catalog}`;
    const header = `-H 'X-IBM-Client-Id: ${app.clientId}'`;
    const curlLines = [
      `curl ${header} '${base}/logistics/shipping?zip=90210'`,
      `curl ${header} '${base}/logistics/stores?zip=90210'`,
      `curl ${header} '${base}/financing/calculate?amount=10000&duration=36&rate=5'`,
      `curl ${header} '${base}/api/items'`,
      ...oauthCurlLines(base, app),
    ];
    return {
      platform,
      clientId: app.clientId,
      clientSecret: app.clientSecret,
      curlLines,
      mailSink,
      async close() {
        await platform.close();
        await mailSink?.close();
        await samples.close();
      },
    };
  } catch (error) {
    await platform.close();
    await mailSink?.close();
    await samples.close();
    throw error;
  }
}
