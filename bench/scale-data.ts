/**
 * Scale data for the `scale` profile: many APIs, products and subscriptions, written straight
 * into the store with multi-row inserts in one transaction (the management services would take
 * minutes for 100 000 subscriptions: each one is its own transaction with argon2-free but
 * several-query checks). The rows are what the services would write — documents parsed by
 * the same definition parsers, states `online` / `published` / `active`.
 *
 * Shape: `apis` APIs in products of 5 APIs each (one plan each); apps in consumer orgs of 100,
 * each app subscribed to 4 different products, the bench's own product among them, until
 * `subscriptions` subscriptions exist (the bench app's one included).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseApiDocument, parseProductDocument } from '../src/definitions/index.ts';
import { assemblyProblems } from '../src/policies/check-assembly.ts';
import type { Insertable } from 'kysely';
import type { Database } from '../src/store/schema.ts';
import type { Store } from '../src/store/store.ts';
import { benchApiText, benchProductText } from './portico-setup.ts';

export interface ScaleOptions {
  orgId: string;
  catalogId: string;
  /** APIs in the catalog in total, the bench API included. */
  apis: number;
  /** Subscriptions in total, the bench app's included. */
  subscriptions: number;
  backend: string;
}

export interface ScaleFacts {
  apis: number;
  products: number;
  apps: number;
  subscriptions: number;
  writeMs: number;
}

const apisPerProduct = 5;
const subscriptionsPerApp = 4;
const appsPerOrg = 100;
const rowsPerInsert = 400;

type Row<T extends keyof Database> = Insertable<Database[T]>;

async function insertAll<T>(insert: (rows: T[]) => Promise<unknown>, rows: T[]): Promise<void> {
  for (let i = 0; i < rows.length; i += rowsPerInsert) await insert(rows.slice(i, i + rowsPerInsert));
}

/** Writes the scale data; returns what was written. */
export async function loadScaleData(store: Store, options: ScaleOptions): Promise<ScaleFacts> {
  const started = performance.now();
  const stamp = new Date().toISOString();
  // One parsed template; the copies differ only in name and base path.
  const apiTemplate = JSON.stringify(
    parseApiDocument(
      benchApiText({
        name: 'svc-name',
        basePath: '/svc-path',
        backend: options.backend,
        secured: true,
        activity: true,
      }),
      'svc.yaml',
      assemblyProblems,
    ).document,
  );
  const productTemplate = parseProductDocument(benchProductText('prod-name', ['svc-a']), 'prod.yaml');
  const plan = productTemplate.plans[0];

  const benchProduct = await store.db
    .selectFrom('products')
    .select(['id'])
    .where('catalog_id', '=', options.catalogId)
    .where('name', '=', 'bench-product')
    .executeTakeFirstOrThrow();
  const benchPlan = await store.db
    .selectFrom('plans')
    .select(['id'])
    .where('product_id', '=', benchProduct.id)
    .executeTakeFirstOrThrow();
  const existingSubscriptions = await store.db
    .selectFrom('subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

  const apiRows: Row<'apis'>[] = [];
  for (let i = 1; i < options.apis; i++) {
    const name = `svc-${String(i).padStart(4, '0')}`;
    apiRows.push({
      id: randomUUID(),
      org_id: options.orgId,
      name,
      version: '1.0.0',
      title: name,
      base_path: `/${name}`,
      state: 'online' as const,
      document: apiTemplate.replaceAll('svc-name', name).replaceAll('/svc-path', `/${name}`),
      attachments: '{}',
      created_at: stamp,
      updated_at: stamp,
    });
  }
  const productRows: Row<'products'>[] = [];
  const planRows: Row<'plans'>[] = [];
  const productApiRows: Row<'product_apis'>[] = [];
  for (let p = 0; p * apisPerProduct < apiRows.length; p++) {
    const members = apiRows.slice(p * apisPerProduct, (p + 1) * apisPerProduct);
    const name = `prod-${String(p).padStart(4, '0')}`;
    const definition = parseProductDocument(
      benchProductText(
        name,
        members.map((a) => a.name),
      ),
      `${name}.yaml`,
    );
    const id = randomUUID();
    productRows.push({
      id,
      catalog_id: options.catalogId,
      name,
      version: '1.0.0',
      title: name,
      state: 'published' as const,
      view_type: 'authenticated' as const,
      subscribe_type: 'authenticated' as const,
      view_orgs: '[]',
      subscribe_orgs: '[]',
      document: JSON.stringify(definition.document),
      created_at: stamp,
      updated_at: stamp,
    });
    const planId = randomUUID();
    planRows.push({
      id: planId,
      product_id: id,
      name: plan.name,
      title: plan.title,
      description: '',
      approval: 0,
      rate_limits: JSON.stringify(plan.rateLimits),
      burst_limits: JSON.stringify(plan.burstLimits),
      position: 0,
    });
    for (const api of members) productApiRows.push({ product_id: id, api_id: api.id, api_key: api.name });
  }

  // Products an app can subscribe to: the bench product first, so it carries its share.
  const targets = [
    { productId: benchProduct.id, planId: benchPlan.id },
    ...productRows.map((p, i) => ({ productId: p.id, planId: planRows[i].id })),
  ];
  const wanted = Math.max(0, options.subscriptions - Number(existingSubscriptions.n));
  const perApp = Math.min(subscriptionsPerApp, targets.length);
  const appCount = Math.ceil(wanted / perApp);
  const orgRows: Row<'consumer_orgs'>[] = [];
  const appRows: Row<'apps'>[] = [];
  const credentialRows: Row<'app_credentials'>[] = [];
  const subscriptionRows: Row<'subscriptions'>[] = [];
  for (let a = 0; a < appCount; a++) {
    if (a % appsPerOrg === 0) {
      const n: number = orgRows.length;
      orgRows.push({
        id: randomUUID(),
        catalog_id: options.catalogId,
        name: `scale-org-${n}`,
        title: `Scale org ${n}`,
        owner_id: null,
        created_at: stamp,
      });
    }
    const appId = randomUUID();
    appRows.push({
      id: appId,
      consumer_org_id: orgRows[orgRows.length - 1].id,
      title: `Scale app ${a}`,
      description: '',
      created_at: stamp,
    });
    credentialRows.push({
      id: randomUUID(),
      app_id: appId,
      client_id: randomBytes(16).toString('hex'),
      secret_hash: randomBytes(32).toString('hex'),
      description: '',
      created_at: stamp,
    });
    for (let k = 0; k < perApp && subscriptionRows.length < wanted; k++) {
      const target: { productId: string; planId: string } = targets[(a * perApp + k) % targets.length];
      subscriptionRows.push({
        id: randomUUID(),
        app_id: appId,
        product_id: target.productId,
        plan_id: target.planId,
        state: 'active' as const,
        created_at: stamp,
        updated_at: stamp,
      });
    }
  }

  await store.transaction(async (trx) => {
    await insertAll((rows) => trx.insertInto('apis').values(rows).execute(), apiRows);
    await insertAll((rows) => trx.insertInto('products').values(rows).execute(), productRows);
    await insertAll((rows) => trx.insertInto('plans').values(rows).execute(), planRows);
    await insertAll((rows) => trx.insertInto('product_apis').values(rows).execute(), productApiRows);
    await insertAll((rows) => trx.insertInto('consumer_orgs').values(rows).execute(), orgRows);
    await insertAll((rows) => trx.insertInto('apps').values(rows).execute(), appRows);
    await insertAll((rows) => trx.insertInto('app_credentials').values(rows).execute(), credentialRows);
    await insertAll((rows) => trx.insertInto('subscriptions').values(rows).execute(), subscriptionRows);
  });
  return {
    apis: apiRows.length + 1,
    products: productRows.length + 1,
    apps: appRows.length,
    subscriptions: subscriptionRows.length + Number(existingSubscriptions.n),
    writeMs: performance.now() - started,
  };
}
