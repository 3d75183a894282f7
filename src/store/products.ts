/** Products in a catalog, their plans and the APIs they bundle. */
import type { Db } from './store.ts';
import type { PlanRow, ProductRow, ProductState, Visibility } from './schema.ts';
import { rowsPerInsert } from './in-lists.ts';
import { newId, now } from './secrets.ts';

export interface PlanInput {
  name: string;
  title: string;
  description: string;
  approval: boolean;
  rateLimits: unknown[];
  burstLimits: unknown[];
}

export interface ProductInput {
  catalogId: string;
  name: string;
  version: string;
  title: string;
  state: ProductState;
  viewType: Visibility;
  subscribeType: Visibility;
  viewOrgs: string[];
  subscribeOrgs: string[];
  document: Record<string, unknown>;
  plans: PlanInput[];
  /** API ids with the key the product document gives each. */
  apis: Array<{ apiId: string; key: string }>;
}

/**
 * Creates the product, or replaces its document, plans and API list when it exists. Plans keep
 * their ids when their names stay, so existing subscriptions stay attached. Call inside a
 * transaction.
 */
export async function upsertProduct(db: Db, input: ProductInput): Promise<{ product: ProductRow; created: boolean }> {
  const stamp = now();
  const existing = await findProduct(db, input.catalogId, input.name, input.version);
  const fields = {
    title: input.title,
    state: input.state,
    view_type: input.viewType,
    subscribe_type: input.subscribeType,
    view_orgs: JSON.stringify(input.viewOrgs),
    subscribe_orgs: JSON.stringify(input.subscribeOrgs),
    document: JSON.stringify(input.document),
    updated_at: stamp,
  };
  let product: ProductRow;
  if (existing) {
    await db.updateTable('products').set(fields).where('id', '=', existing.id).execute();
    product = { ...existing, ...fields };
  } else {
    product = {
      id: newId(),
      catalog_id: input.catalogId,
      name: input.name,
      version: input.version,
      created_at: stamp,
      ...fields,
    };
    await db.insertInto('products').values(product).execute();
  }
  await db.deleteFrom('product_apis').where('product_id', '=', product.id).execute();
  const links = input.apis.map((a) => ({ product_id: product.id, api_id: a.apiId, api_key: a.key }));
  for (let start = 0, size = rowsPerInsert(3); start < links.length; start += size) {
    await db
      .insertInto('product_apis')
      .values(links.slice(start, start + size))
      .execute();
  }
  await replacePlans(db, product.id, input.plans);
  return { product, created: !existing };
}

async function replacePlans(db: Db, productId: string, plans: PlanInput[]): Promise<void> {
  const current = await allPlans(db, productId);
  const byName = new Map(current.map((p) => [p.name, p]));
  const kept = new Set<string>();
  for (const [position, plan] of plans.entries()) {
    const values = {
      title: plan.title,
      description: plan.description,
      approval: plan.approval ? 1 : 0,
      rate_limits: JSON.stringify(plan.rateLimits),
      burst_limits: JSON.stringify(plan.burstLimits),
      position,
    };
    const old = byName.get(plan.name);
    if (old) {
      kept.add(old.id);
      await db.updateTable('plans').set(values).where('id', '=', old.id).execute();
    } else {
      await db
        .insertInto('plans')
        .values({ id: newId(), product_id: productId, name: plan.name, ...values })
        .execute();
    }
  }
  for (const old of current) {
    if (kept.has(old.id)) continue;
    // A plan dropped from the document: its subscriptions end, then the plan goes.
    await db
      .updateTable('subscriptions')
      .set({ state: 'cancelled', updated_at: now() })
      .where('plan_id', '=', old.id)
      .execute();
    const used = await db.selectFrom('subscriptions').select('id').where('plan_id', '=', old.id).executeTakeFirst();
    if (!used) await db.deleteFrom('plans').where('id', '=', old.id).execute();
  }
}

export function findProduct(db: Db, catalogId: string, name: string, version: string): Promise<ProductRow | undefined> {
  return db
    .selectFrom('products')
    .selectAll()
    .where('catalog_id', '=', catalogId)
    .where('name', '=', name)
    .where('version', '=', version)
    .executeTakeFirst();
}

export function findProductById(db: Db, id: string): Promise<ProductRow | undefined> {
  return db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listProducts(db: Db, catalogId: string, states?: ProductState[]): Promise<ProductRow[]> {
  let query = db.selectFrom('products').selectAll().where('catalog_id', '=', catalogId);
  if (states && states.length > 0) query = query.where('state', 'in', states);
  return query.orderBy('name').orderBy('version').execute();
}

export async function setProductState(db: Db, id: string, state: ProductState): Promise<void> {
  await db.updateTable('products').set({ state, updated_at: now() }).where('id', '=', id).execute();
}

/** Every plan row of a product, including those a republish dropped that subscriptions still name. */
function allPlans(db: Db, productId: string): Promise<PlanRow[]> {
  return db.selectFrom('plans').selectAll().where('product_id', '=', productId).orderBy('position').execute();
}

/**
 * The product's plans as its document has them now. A plan a republish dropped keeps its row while
 * subscriptions name it (their history), but is listed, offered and subscribed to no more (a
 * review found it still offered in the portal and the management API, and subscribable).
 */
export async function listPlans(db: Db, productId: string): Promise<PlanRow[]> {
  const [rows, product] = await Promise.all([allPlans(db, productId), findProductById(db, productId)]);
  const current = product === undefined ? undefined : (JSON.parse(product.document) as { plans?: object }).plans;
  return rows.filter((row) => current !== undefined && Object.hasOwn(current, row.name));
}

export function findPlanById(db: Db, id: string): Promise<PlanRow | undefined> {
  return db.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The APIs a product bundles, with their keys. */
export function listProductApis(db: Db, productId: string) {
  return db
    .selectFrom('product_apis')
    .innerJoin('apis', 'apis.id', 'product_apis.api_id')
    .select([
      'apis.id',
      'apis.name',
      'apis.version',
      'apis.title',
      'apis.state',
      'apis.base_path',
      'product_apis.api_key',
    ])
    .where('product_apis.product_id', '=', productId)
    .orderBy('apis.name')
    .execute();
}

/**
 * Every consumer organization name a product's visibility lists, in any catalog, lower-cased:
 * names a self-registered organization must never get (issue 12, finding 12).
 */
export async function visibilityOrgNames(db: Db): Promise<Set<string>> {
  const rows = await db.selectFrom('products').select(['view_orgs', 'subscribe_orgs']).execute();
  const names = new Set<string>();
  for (const row of rows) {
    for (const list of [row.view_orgs, row.subscribe_orgs]) {
      for (const name of JSON.parse(list) as string[]) names.add(name.toLowerCase());
    }
  }
  return names;
}
