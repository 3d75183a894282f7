/**
 * Writes a bench catalog into a fresh SQLite store, in a process of its own (so the setup's
 * memory — argon2 hashing, parsers — is not counted in the gateway's RSS), then prints one JSON
 * line: the client id and the paths to load.
 *
 * The catalog goes through the management `Services` (the code the REST API and the CLI
 * call); only the scale data is bulk-inserted (bench/scale-data.ts). `BENCH_MODE`:
 *
 * - `pass`: one API, no security, activity log off, assembly = one invoke of the backend;
 * - `full`: client-id security, an approved subscription, a plan limit far above the load
 *   (counted, headers added), one invoke, activity log `activity` (batched to SQLite);
 * - `jwt`: `full` plus a jwt-validate of `Authorization: Bearer` against the JWKS of
 *   `BENCH_AUTH_URL` (fetched once, then cached) before the invoke;
 * - `introspect`: `full` with the client id replaced by an oauth2 definition whose
 *   x-tokenIntrospect is `BENCH_AUTH_URL` (answers cached);
 * - `oauth`: `full` with the client id replaced by an oauth2 definition naming the native OAuth
 *   provider `bench-oauth` (enabled in the catalog): every call carries an ES256 access token the
 *   gateway itself issued by client credentials, verified from the snapshot;
 * - `accessories`: the demo's examples (logistics, financing) against the sample backends,
 *   whose ports come in `BENCH_SAMPLE_PORTS` (JSON), subscribed to Gold.
 *
 * `BENCH_SCALE_APIS` / `BENCH_SCALE_SUBSCRIPTIONS` add that many APIs and subscriptions.
 */
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../src/config/config.ts';
import { readDefinitionFolder } from '../src/management/folder.ts';
import { ConsumerServices } from '../src/services/consumer-services.ts';
import { OAuthProviders } from '../src/services/oauth-providers.ts';
import { ProviderServices as Services } from '../src/services/provider-services.ts';
import { openStore } from '../src/store/store.ts';
import { envPort } from './lib/announce.ts';
import { loadScaleData } from './scale-data.ts';
import type { ScaleFacts } from './scale-data.ts';

export type SetupMode = 'pass' | 'full' | 'jwt' | 'introspect' | 'oauth' | 'accessories';

export const benchOrg = 'bench';
export const benchCatalog = 'sandbox';
// High enough never to trip under the bench's load, low enough to be a real, counted limit.
const planLimit = '1000000000/1hour';

/** What the setup prints for the gateway process. */
export interface SetupResult {
  clientId?: string;
  /** The app's secret (oauth mode: the target gets its token with client credentials). */
  clientSecret?: string;
  /** oauth mode: the token endpoint below the gateway origin. */
  tokenPath?: string;
  paths: Record<string, string>;
  scale?: ScaleFacts;
  setupMs: number;
}

/** The bench API: one GET operation whose assembly is one invoke of the backend. */
export function benchApiText(options: {
  name: string;
  basePath: string;
  backend: string;
  secured: boolean;
  activity: boolean;
  auth?: { kind: 'jwt' | 'introspect' | 'oauth'; url: string };
}): string {
  const auth = options.auth;
  const security =
    auth?.kind === 'oauth'
      ? `securityDefinitions:
  oauth:
    type: oauth2
    flow: application
    tokenUrl: ${auth.url}
    x-ibm-oauth-provider: ${benchProvider.name}
    scopes:
      read: read
security:
  - oauth: [read]
`
      : auth?.kind === 'introspect'
        ? `securityDefinitions:
  oauth:
    type: oauth2
    flow: application
    tokenUrl: ${auth.url}/token
    scopes:
      read: read
    x-tokenIntrospect:
      url: ${auth.url}/introspect
security:
  - oauth: [read]
`
        : options.secured
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
${
  auth?.kind === 'jwt'
    ? `      - jwt-validate:
          version: 2.0.0
          jwks-url: '${auth.url}/jwks.json'
          iss-claim: '^https://bench\\.example$'
          aud-claim: '^bench$'
`
    : ''
}      - invoke:
          version: 2.0.0
          title: backend
          target-url: '${options.backend}/item'
          verb: keep
`;
}

/** The native provider of the oauth mode: client credentials, one scope, day-long tokens (no expiry mid-run). */
export const benchProvider = {
  name: 'bench-oauth',
  grants: ['application'],
  scopes: { read: 'read' },
  native_provider: { api: { basePath: '/oauth' }, access_token_ttl: 86_400 },
};

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

type BenchApp = { clientId: string; clientSecret: string };

async function setUpBench(
  services: Services,
  mode: Exclude<SetupMode, 'accessories'>,
  backend: string,
): Promise<Partial<BenchApp> & { orgId: string; catalogId: string }> {
  const { orgId, sandbox } = await services.ensureOrg(benchOrg);
  const full = mode !== 'pass';
  const authUrl =
    mode === 'oauth'
      ? `https://bench.example/${benchOrg}/${benchCatalog}/oauth/oauth2/token`
      : (process.env.BENCH_AUTH_URL ?? '');
  const auth = mode === 'jwt' || mode === 'introspect' || mode === 'oauth' ? { kind: mode, url: authUrl } : undefined;
  if (mode === 'oauth') {
    const providers = new OAuthProviders(services);
    await providers.create(orgId, benchProvider);
    await providers.enable(orgId, benchCatalog, benchProvider.name);
  }
  const text = benchApiText({
    name: 'bench',
    basePath: '/bench',
    backend,
    secured: full,
    // BENCH_ACTIVITY=off: full without the activity log, to see what the log costs (not a target).
    activity: full && process.env.BENCH_ACTIVITY !== 'off',
    auth,
  });
  await services.importApi(orgId, { text, file: 'bench.yaml', state: 'online' });
  await services.putProduct(orgId, benchCatalog, {
    text: benchProductText('bench-product', ['bench']),
    file: 'bench-product.yaml',
    state: 'published',
  });
  if (mode === 'pass') return { orgId, catalogId: sandbox.id };
  const app = await subscribedApp(services, orgId, sandbox.id, 'bench-product', 'default');
  return { ...app, orgId, catalogId: sandbox.id };
}

/** A developer, an app and an approved subscription to `plan` of `product`; the app's client id and secret. */
async function subscribedApp(
  services: Services,
  orgId: string,
  catalogId: string,
  product: string,
  plan: string,
): Promise<BenchApp> {
  const consumer = new ConsumerServices(services.store, services.bus, services.signInLimiter);
  const { org: consumerOrg } = await consumer.signUp(catalogId, {
    email: 'bench@example.com',
    password: 'bench-pass-1234',
    orgTitle: 'Bench Developers',
  });
  const { app, credential, clientSecret } = await consumer.createApp(consumerOrg.id, { title: 'Bench App' });
  const row = await services.product(orgId, benchCatalog, product, '1.0.0');
  const subscription = await consumer.subscribe(consumerOrg.id, {
    appId: app.id,
    productId: row.id,
    planName: plan,
  });
  if (subscription.state === 'pending')
    await services.decideSubscription(orgId, benchCatalog, subscription.id, 'approve');
  return { clientId: credential.client_id, clientSecret };
}

/** The demo's examples, pointed at the sample backends of this run (as `portico demo` does). */
async function setUpAccessories(services: Services, samplePorts: Record<string, number>): Promise<string> {
  const { orgId, sandbox } = await services.ensureOrg(benchOrg);
  const folder = readDefinitionFolder(fileURLToPath(new URL('../examples/accessories/', import.meta.url)));
  const defaults: Record<string, number> = {
    financing: 9081,
    shipping: 9082,
    geocoder: 9083,
    inventory: 9084,
  };
  const retarget = (text: string): string => {
    let out = text;
    for (const [name, port] of Object.entries(samplePorts))
      out = out.replaceAll(`127.0.0.1:${defaults[name]}`, `127.0.0.1:${port}`);
    return out;
  };
  const attachments = (files: Record<string, string>) =>
    Object.fromEntries(Object.entries(files).map(([n, t]) => [n, retarget(t)]));
  for (const doc of folder.apis) {
    await services.importApi(orgId, {
      text: retarget(doc.text),
      file: doc.file,
      attachments: attachments(doc.attachments),
      state: 'online',
    });
  }
  for (const doc of folder.products) {
    await services.putProduct(orgId, benchCatalog, {
      text: doc.text,
      file: doc.file,
      state: 'published',
      attachments: attachments(doc.attachments),
    });
  }
  return (await subscribedApp(services, orgId, sandbox.id, 'accessories', 'gold')).clientId;
}

/** Reads BENCH_MODE. */
export function readMode(): SetupMode {
  const mode = process.env.BENCH_MODE ?? 'full';
  if (!['pass', 'full', 'jwt', 'introspect', 'oauth', 'accessories'].includes(mode)) {
    throw new Error(`BENCH_MODE must be pass, full, jwt, introspect, oauth or accessories, got ${mode}`);
  }
  return mode as SetupMode;
}

/** Writes the catalog for `mode` into the store of `dataDir`. */
export async function setUp(dataDir: string, mode: SetupMode): Promise<SetupResult> {
  const started = performance.now();
  const store = await openStore(loadSettings({}, { dataDir }).databaseUrl);
  const services = new Services(store);
  const base = `/${benchOrg}/${benchCatalog}`;
  try {
    if (mode === 'accessories') {
      const clientId = await setUpAccessories(
        services,
        JSON.parse(process.env.BENCH_SAMPLE_PORTS ?? '{}') as Record<string, number>,
      );
      const paths = {
        shipping: `${base}/logistics/shipping?zip=90210`,
        stores: `${base}/logistics/stores?zip=90210`,
        financing: `${base}/financing/calculate?amount=10000&duration=36&rate=5`,
      };
      return { clientId, paths, setupMs: performance.now() - started };
    }
    const backend = `http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`;
    const setup = await setUpBench(services, mode, backend);
    const apis = Number(process.env.BENCH_SCALE_APIS ?? 0);
    const subscriptions = Number(process.env.BENCH_SCALE_SUBSCRIPTIONS ?? 0);
    const scale =
      apis > 0 || subscriptions > 0
        ? await loadScaleData(store, {
            orgId: setup.orgId,
            catalogId: setup.catalogId,
            apis,
            subscriptions,
            backend,
          })
        : undefined;
    const tokenPath = mode === 'oauth' ? `${base}/oauth/oauth2/token` : undefined;
    const { clientId, clientSecret } = setup;
    return {
      clientId,
      clientSecret,
      tokenPath,
      paths: { item: `${base}/bench/item` },
      scale,
      setupMs: performance.now() - started,
    };
  } finally {
    await store.close();
  }
}

// Run as a script: `BENCH_DATA_DIR=… node --import tsx bench/portico-setup.ts`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dataDir = process.env.BENCH_DATA_DIR;
  if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
  const result = await setUp(dataDir, readMode());
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
