/**
 * Portico as a bench target: a gateway-only process on a temporary SQLite store.
 *
 * The catalog is written first, in this process, through the management `Services` (the same
 * code the REST API and the CLI call) on the store; the store is then closed and
 * `startPlatform(settings, logger, 'gateway')` opens it again and compiles its snapshot. The
 * gateway reads the store only at start and on a change (DESIGN §1), so the per-request path
 * sees no database. `BENCH_MODE`:
 *
 * - `pass`: one API, no security, activity log off, assembly = one invoke of the backend;
 * - `full`: client-id security, an approved subscription, a plan limit far above the load
 *   (counted, headers added), one invoke, activity log `activity` (batched to SQLite);
 * - `accessories`: the demo's examples (logistics, financing) against the sample backends,
 *   whose ports come in `BENCH_SAMPLE_PORTS` (JSON), subscribed to Gold.
 *
 * Also: `BENCH_SCALE_APIS` / `BENCH_SCALE_SUBSCRIPTIONS` add that many APIs and subscriptions
 * (bench/scale-data.ts); `BENCH_PUBLISH_EVERY_MS` republishes the product, changed, at that
 * interval during the run (the reload profile). `PORTICO_REDIS_URL` is passed through.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadSettings } from '../src/config/config.ts';
import { readDefinitionFolder } from '../src/management/folder.ts';
import { Services } from '../src/management/services.ts';
import { startPlatform } from '../src/platform.ts';
import { openStore } from '../src/store/store.ts';
import { announce, envPort, exitOnSignal } from './lib/announce.ts';
import { loadScaleData } from './scale-data.ts';

type Mode = 'pass' | 'full' | 'accessories';

const org = 'bench';
const catalogName = 'sandbox';
// High enough never to trip under the bench's load, low enough to be a real, counted limit.
const planLimit = '1000000000/1hour';

/** The bench API: one GET operation whose assembly is one invoke of the backend. */
export function benchApiText(options: { name: string; basePath: string; backend: string; secured: boolean; activity: boolean }): string {
  const security = options.secured
    ? `securityDefinitions:
  clientID:
    type: apiKey
    in: header
    name: X-IBM-Client-Id
security:
  - clientID: []
`
    : 'security: []\n';
  return `swagger: '2.0'
info:
  title: ${options.name}
  x-ibm-name: ${options.name}
  version: 1.0.0
basePath: ${options.basePath}
${security}paths:
  /item:
    get:
      operationId: getItem
      responses:
        '200':
          description: the item
x-ibm-configuration:
  enforced: true
  cors:
    enabled: false
  activity-log:
    enabled: ${options.activity}
    success-content: activity
    error-content: activity
  assembly:
    execute:
      - invoke:
          version: 2.0.0
          title: backend
          target-url: '${options.backend}/item'
          verb: keep
`;
}

/** A product bundling `apis` (by name) with one plan at `planLimit`; `revision` changes its text. */
export function benchProductText(name: string, apis: string[], revision = 0): string {
  const list = apis.map((api) => `  ${api}:\n    name: '${api}:1.0.0'`).join('\n');
  return `product: 1.0.0
info:
  name: ${name}
  title: ${name}
  version: 1.0.0
  description: 'revision ${revision}'
visibility:
  view:
    type: authenticated
    enabled: true
  subscribe:
    type: authenticated
    enabled: true
plans:
  default:
    title: Default
    approval: false
    rate-limits:
      default:
        value: ${planLimit}
        hard-limit: true
apis:
${list}
`;
}

async function setUpBench(services: Services, mode: 'pass' | 'full', backend: string): Promise<{ clientId?: string; orgId: string; catalogId: string }> {
  const { orgId, sandbox } = await services.ensureOrg(org);
  const text = benchApiText({ name: 'bench', basePath: '/bench', backend, secured: mode === 'full', activity: mode === 'full' });
  await services.importApi(orgId, { text, file: 'bench.yaml', state: 'online' });
  await services.putProduct(orgId, catalogName, { text: benchProductText('bench-product', ['bench']), file: 'bench-product.yaml', state: 'published' });
  if (mode === 'pass') return { orgId, catalogId: sandbox.id };
  const clientId = await subscribedApp(services, orgId, sandbox.id, 'bench-product', 'default');
  return { clientId, orgId, catalogId: sandbox.id };
}

/** A developer, an app and an approved subscription to `plan` of `product`; the app's client id. */
async function subscribedApp(services: Services, orgId: string, catalogId: string, product: string, plan: string): Promise<string> {
  const { org: consumerOrg } = await services.signUp(catalogId, { email: 'bench@example.com', password: 'bench-pass-1234', orgTitle: 'Bench Developers' });
  const { app, credential } = await services.createApp(consumerOrg.id, { title: 'Bench App' });
  const row = await services.product(orgId, catalogName, product, '1.0.0');
  const subscription = await services.subscribe(consumerOrg.id, { appId: app.id, productId: row.id, planName: plan, viewer: 'authenticated' });
  if (subscription.state === 'pending') await services.decideSubscription(orgId, catalogName, subscription.id, 'approve');
  return credential.client_id;
}

/** The demo's examples, pointed at the sample backends of this run (as `portico demo` does). */
async function setUpAccessories(services: Services, samplePorts: Record<string, number>): Promise<{ clientId: string }> {
  const { orgId, sandbox } = await services.ensureOrg(org);
  const folder = readDefinitionFolder(fileURLToPath(new URL('../examples/accessories/', import.meta.url)));
  const defaults: Record<string, number> = { financing: 9081, shipping: 9082, geocoder: 9083, inventory: 9084 };
  const retarget = (text: string): string => {
    let out = text;
    for (const [name, port] of Object.entries(samplePorts)) out = out.replaceAll(`127.0.0.1:${defaults[name]}`, `127.0.0.1:${port}`);
    return out;
  };
  const attachments = (files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([n, t]) => [n, retarget(t)]));
  for (const doc of folder.apis) {
    await services.importApi(orgId, { text: retarget(doc.text), file: doc.file, attachments: attachments(doc.attachments), state: 'online' });
  }
  for (const doc of folder.products) {
    await services.putProduct(orgId, catalogName, { text: doc.text, file: doc.file, state: 'published', attachments: attachments(doc.attachments) });
  }
  const clientId = await subscribedApp(services, orgId, sandbox.id, 'accessories', 'gold');
  return { clientId };
}

function readMode(): Mode {
  const mode = process.env.BENCH_MODE ?? 'full';
  if (mode !== 'pass' && mode !== 'full' && mode !== 'accessories') throw new Error(`BENCH_MODE must be pass, full or accessories, got ${mode}`);
  return mode;
}

async function main(): Promise<void> {
  const mode = readMode();
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
  const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'warn' }, pino.destination(2));
  const settings = loadSettings(
    { PORTICO_GATEWAY_PORT: String(envPort('BENCH_PORT', 0)), PORTICO_REDIS_URL: process.env.PORTICO_REDIS_URL, PORTICO_LOG_LEVEL: 'warn' },
    { dataDir },
  );

  // 1. The catalog, written through the management services, then the store closed.
  const setupStarted = performance.now();
  const store = await openStore(settings.databaseUrl);
  const services = new Services(store);
  let clientId: string | undefined;
  let scale: Awaited<ReturnType<typeof loadScaleData>> | undefined;
  if (mode === 'accessories') {
    clientId = (await setUpAccessories(services, JSON.parse(process.env.BENCH_SAMPLE_PORTS ?? '{}') as Record<string, number>)).clientId;
  } else {
    const backend = `http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`;
    const setup = await setUpBench(services, mode, backend);
    clientId = setup.clientId;
    const apis = Number(process.env.BENCH_SCALE_APIS ?? 0);
    const subscriptions = Number(process.env.BENCH_SCALE_SUBSCRIPTIONS ?? 0);
    if (apis > 0 || subscriptions > 0) scale = await loadScaleData(store, { orgId: setup.orgId, catalogId: setup.catalogId, apis, subscriptions, backend });
  }
  await store.close();
  const setupMs = performance.now() - setupStarted;

  // 2. The gateway alone, as `portico serve --role gateway` runs it.
  const rssBeforeGateway = process.memoryUsage().rss;
  const platform = await startPlatform(settings, logger, 'gateway');
  const gateway = platform.gateway!;
  const port = Number(new URL(platform.urls.gateway!).port);

  let publishes = 0;
  let publishFailures = 0;
  let timer: NodeJS.Timeout | undefined;
  const every = Number(process.env.BENCH_PUBLISH_EVERY_MS ?? 0);
  if (every > 0 && mode !== 'accessories') {
    const { orgId } = await platform.services.ensureOrg(org);
    timer = setInterval(() => {
      // A changed product document: the gateway rebuilds and swaps its snapshot.
      platform.services
        .putProduct(orgId, catalogName, { text: benchProductText('bench-product', ['bench'], publishes + 1), file: 'bench-product.yaml', state: 'published' })
        .then(() => publishes++)
        .catch((error: unknown) => {
          publishFailures++;
          logger.error({ err: error }, 'bench publish failed');
        });
    }, every);
  }

  const headers: Record<string, string> = clientId ? { 'X-IBM-Client-Id': clientId } : {};
  const base = `/${org}/${catalogName}`;
  const paths =
    mode === 'accessories'
      ? {
          shipping: `${base}/logistics/shipping?zip=90210`,
          stores: `${base}/logistics/stores?zip=90210`,
          financing: `${base}/financing/calculate?amount=10000&duration=36&rate=5`,
        }
      : { item: `${base}/bench/item` };
  announce({
    port,
    path: Object.values(paths)[0],
    headers,
    facts: {
      mode,
      paths,
      apis: gateway.current?.apiCount,
      compileMs: gateway.current?.compileMs,
      setupMs,
      rssBeforeGatewayMb: rssBeforeGateway / 1048576,
      scale,
      redis: settings.redisUrl !== undefined,
    },
  });

  exitOnSignal(async () => {
    if (timer) clearInterval(timer);
    // The run's own tally, read by the runner: how many changed products were published.
    process.stdout.write(`${JSON.stringify({ final: true, publishes, publishFailures, lastCompileMs: gateway.current?.compileMs, change: gateway.current?.change })}\n`);
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
}

await main();
