/**
 * Reads, in a handful of bulk queries, everything a gateway compiles into its snapshot: the
 * catalogs, their published (and deprecated) products with plans, the online APIs they
 * bundle, and the consumer side (apps, credentials, live subscriptions).
 *
 * A reload reads the consumer side only where the changes since the snapshot before it can have
 * touched it (issue 18: at 25 000 apps and 100 000 subscriptions, reading them again held the
 * event loop for ~0.5–1 s at every publish, token revocation, approval or new app). The change
 * feed says which kinds of change were committed since, and what each touched (`ref`): API,
 * catalog, registry and OAuth changes touch neither apps nor subscriptions; a product change
 * touches only the subscriptions of products whose row or plans changed (their stamps differ); a
 * subscription change, those of the product it names; an app or credential change (or deletion),
 * that app's row and credentials; a consumer org's deletion, nothing itself (its transaction also
 * recorded each app and product it touched). Those are read again, the rest is kept from the
 * previous snapshot; any other change (one that names nothing, a kind the gateway does not know)
 * has everything read, as does a first load.
 *
 * The catalog side is read whole, but the API documents only where they changed (snapshot-apis.ts).
 */
import { createHash } from 'node:crypto';
import type { Db } from './store.ts';
import type {
  OAuthKeyRow,
  OAuthProviderRow,
  PlanRow,
  ProductRow,
  SubscriptionState,
  UserRegistryRow,
} from './schema.ts';
import { loadCatalogProviders, loadKeys, loadRevocations } from './oauth.ts';
import { changeKinds, latestChange } from './changes.ts';
import { loadCatalogRegistries } from './user-registries.ts';
import { readIn } from './in-lists.ts';
import { wholly } from '../time-slices.ts';
import type { TimeSlices } from '../time-slices.ts';
import { compileInputsChanged, loadApis } from './snapshot-apis.ts';
import type { SnapshotApi } from './snapshot-apis.ts';

export type { SnapshotApi } from './snapshot-apis.ts';

export interface SnapshotData {
  change: number;
  catalogs: Array<{ id: string; name: string; orgId: string; orgName: string }>;
  products: ProductRow[];
  plans: PlanRow[];
  productApis: Array<{ product_id: string; api_id: string; api_key: string }>;
  /** The online APIs the products bundle; `document` only where it was read (see above). */
  apis: SnapshotApi[];
  /** Every app, or those of {@link appsOf} only (the others are the previous snapshot's). */
  apps: Array<{
    id: string;
    title: string;
    consumer_org_id: string;
    consumer_org_name: string;
    consumer_org_title: string;
    redirect_uris?: string;
    catalog_id?: string;
  }>;
  /** The credentials of {@link apps}. */
  credentials: Array<{ client_id: string; secret_hash: string; app_id: string }>;
  /** Which apps {@link apps} holds; absent means all. */
  appsOf?: 'all' | ReadonlySet<string>;
  /**
   * The live subscriptions of the products in {@link subscriptionsOf}: every product's when it
   * is `all` (or absent), else only those products' (the others' are the previous snapshot's).
   */
  subscriptions: Array<{
    id: string;
    app_id: string;
    product_id: string;
    plan_id: string;
    state: SubscriptionState;
  }>;
  /** Each catalog's enabled user registries (configuration with secrets: the gateway binds with them). */
  userRegistries?: Array<UserRegistryRow & { catalog_id: string }>;
  /** Each catalog's enabled native OAuth providers, their live signing keys, and revoked token ids. */
  oauth?: OAuthData;
  /** Which products' subscriptions {@link subscriptions} holds; absent means all. */
  subscriptionsOf?: 'all' | ReadonlySet<string>;
  /** What the next reload compares with (see {@link ReloadBase}); absent in data not read from a store. */
  base?: ReloadBase;
}

/** What a reload needs of the load before it, to read again only what changed since. */
export interface ReloadBase {
  /** The change the load reflected. */
  change: number;
  /**
   * Change ids below `change` (within {@link changeWindow}) that were not committed when it was
   * read: on PostgreSQL ids come from a sequence, so a transaction can commit after a later id.
   */
  missing: readonly number[];
  /** Each published product's stamp: its row and plans, as its subscribers were built from them. */
  productStamps: ReadonlyMap<string, string>;
  /**
   * `catalogId|apiId` → `updated_at`, for each API the snapshot built from this load holds
   * compiled (set by the compiler). Absent: every document is read.
   */
  compiled?: ReadonlyMap<string, string>;
}

/** How far below the latest change an uncommitted (or rolled back) id is still looked for. */
export const changeWindow = 1000;

// What each kind of change makes a reload read again (store/changes.ts).
const catalogKinds = new Set<string>([...changeKinds.catalog, ...changeKinds.compileInput]);
const productKinds = new Set<string>(changeKinds.product);
const subscriptionKinds = new Set<string>(changeKinds.subscription);
const appKinds = new Set<string>(changeKinds.app);
const besideKinds = new Set<string>(changeKinds.beside);
/**
 * A read of every row (a first load, a reload that reads everything) in pages by key, with a turn
 * between pages: 100 000 subscriptions are ~170 ms in one query, a stall for every request waiting.
 */
async function inPages<T>(
  page: (after: string) => Promise<T[]>,
  pageRows: number,
  slices: TimeSlices,
  keyOf: (row: T) => string,
): Promise<T[]> {
  const rows: T[] = [];
  for (let after = ''; ;) {
    const read = await page(after);
    for (const row of read) rows.push(row);
    if (read.length < pageRows) return rows;
    after = keyOf(read[read.length - 1]);
    await slices.pause();
  }
}

/** What a load reads of the consumer side: everything, or these apps and these products' subscriptions. */
interface ConsumerScope {
  apps: 'all' | Set<string>;
  /** Besides the products whose stamp changed. */
  subscriptions: 'all' | Set<string>;
}

const everything = (): ConsumerScope => ({ apps: 'all', subscriptions: 'all' });

interface ChangeRow {
  kind: string;
  ref: string | null;
}

/** The changes committed since `base` (undefined: not comparable), and the ids below `change` not committed yet. */
async function changesSince(
  db: Db,
  base: ReloadBase | undefined,
  change: number,
): Promise<{ changes: ChangeRow[] | undefined; missing: number[] }> {
  const from = Math.min(base?.change ?? change, change) - changeWindow;
  const rows = await db
    .selectFrom('changes')
    .select(['id', 'kind', 'ref'])
    .where('id', '>', from)
    .where('id', '<=', change)
    .execute();
  const seen = new Set<number>();
  const changes: ChangeRow[] = [];
  const waited = new Set(base?.missing ?? []);
  for (const row of rows) {
    const id = Number(row.id);
    seen.add(id);
    if (base !== undefined && (id > base.change || waited.has(id))) changes.push(row);
  }
  const missing: number[] = [];
  for (let id = Math.max(change - changeWindow, 0) + 1; id <= change; id++) if (!seen.has(id)) missing.push(id);
  // A base older than the window (or a counter that went back) cannot be compared with: read everything.
  const comparable = base !== undefined && base.change <= change && base.change > change - changeWindow;
  return { changes: comparable ? changes : undefined, missing };
}

function consumerScope(changes: ChangeRow[] | undefined): ConsumerScope {
  if (changes === undefined) return everything();
  const scope: ConsumerScope = { apps: new Set(), subscriptions: new Set() };
  for (const { kind, ref } of changes) {
    if (catalogKinds.has(kind) || productKinds.has(kind)) continue;
    if (subscriptionKinds.has(kind)) {
      if (ref === null) scope.subscriptions = 'all';
      else if (scope.subscriptions !== 'all') scope.subscriptions.add(ref);
    } else if (appKinds.has(kind) && ref !== null) {
      if (scope.apps !== 'all') scope.apps.add(ref);
    } else if (!besideKinds.has(kind) || ref === null) {
      return everything();
    }
  }
  return scope;
}

/** A product's stamp: what its subscribers' snapshot entries are built from (its row, its plans). */
async function productStamps(
  products: ProductRow[],
  plans: PlanRow[],
  slices: TimeSlices,
): Promise<Map<string, string>> {
  const plansOf = new Map<string, PlanRow[]>();
  for (const plan of plans) {
    const list = plansOf.get(plan.product_id);
    if (list) list.push(plan);
    else plansOf.set(plan.product_id, [plan]);
  }
  const stamps = new Map<string, string>();
  for (const product of products) {
    await slices.pause();
    const hash = createHash('sha256');
    hash.update(JSON.stringify(product));
    for (const plan of plansOf.get(product.id) ?? []) hash.update(JSON.stringify(plan));
    stamps.set(product.id, hash.digest('base64'));
  }
  return stamps;
}

export interface OAuthData {
  providers: Array<OAuthProviderRow & { catalog_id: string }>;
  keys: OAuthKeyRow[];
  revoked: string[];
}

// The longest access token lifetime a provider may set: keys retired longer ago verify nothing.
const maxAccessTokenMs = 86_400_000;

async function loadOAuth(db: Db): Promise<OAuthData> {
  const at = Date.now();
  const providers = await loadCatalogProviders(db);
  const keys = providers.length === 0 ? [] : await loadKeys(db, at - maxAccessTokenMs);
  return { providers, keys, revoked: await loadRevocations(db, Math.floor(at / 1000)) };
}

/**
 * Loads the snapshot data; run it in `Store.consistentRead` so the parts agree with each other.
 * With the `base` of the snapshot it replaces, the consumer side is read only where changes since
 * may have touched it (see above); the caller keeps the rest from that snapshot.
 */
export async function loadSnapshotData(
  db: Db,
  base?: ReloadBase,
  slices = wholly(),
  pageRows = 2000,
): Promise<SnapshotData> {
  const change = await latestChange(db);
  const since = await changesSince(db, base, change);
  const scope = consumerScope(since.changes);
  const catalogs = await db
    .selectFrom('catalogs')
    .innerJoin('provider_orgs', 'provider_orgs.id', 'catalogs.org_id')
    .select(['catalogs.id', 'catalogs.name', 'catalogs.org_id as orgId', 'provider_orgs.name as orgName'])
    .execute();
  const products = await db
    .selectFrom('products')
    .selectAll()
    .where('state', 'in', ['published', 'deprecated'])
    .execute();
  const productIds = products.map((p) => p.id);
  if (productIds.length === 0) {
    // Apps and credentials are not read here: no base, so the next load reads everything.
    const none = { plans: [], productApis: [], apis: [], apps: [], credentials: [], subscriptions: [] };
    return { change, catalogs, products, ...none, userRegistries: [], oauth: await loadOAuth(db) };
  }
  await slices.pause();
  const plans = await readIn(productIds, (ids) =>
    db.selectFrom('plans').selectAll().where('product_id', 'in', ids).execute(),
  );
  await slices.pause();
  const productApis = await readIn(productIds, (ids) =>
    db.selectFrom('product_apis').selectAll().where('product_id', 'in', ids).execute(),
  );
  await slices.pause();
  const compiled = compileInputsChanged(since.changes) ? undefined : base?.compiled;
  const apis = await loadApis(db, products, productApis, compiled);
  const stamps = await productStamps(products, plans, slices);
  const changed = scope.subscriptions;
  const subscriptionsOf =
    changed === 'all'
      ? 'all'
      : new Set(productIds.filter((id) => changed.has(id) || stamps.get(id) !== base?.productStamps.get(id)));
  const wanted = subscriptionsOf === 'all' ? productIds : [...subscriptionsOf];
  const live = db
    .selectFrom('subscriptions')
    .select(['id', 'app_id', 'product_id', 'plan_id', 'state'])
    .where('state', 'in', ['active', 'pending']);
  const subscriptions =
    wanted.length === 0
      ? []
      : subscriptionsOf === 'all'
        ? await inPages(
            (after) => live.where('id', '>', after).orderBy('id').limit(pageRows).execute(),
            pageRows,
            slices,
            (row) => row.id,
          )
        : await readIn(wanted, (ids) => live.where('product_id', 'in', ids).execute());
  await slices.pause();
  const appsOf = scope.apps;
  const appIds = appsOf === 'all' ? [] : [...appsOf];
  const readsApps = appsOf === 'all' || appIds.length > 0;
  const appRows = db
    .selectFrom('apps')
    .innerJoin('consumer_orgs', 'consumer_orgs.id', 'apps.consumer_org_id')
    .select([
      'apps.id',
      'apps.title',
      'apps.consumer_org_id',
      'consumer_orgs.name as consumer_org_name',
      'consumer_orgs.title as consumer_org_title',
      'apps.redirect_uris',
      'consumer_orgs.catalog_id',
    ]);
  const credentialRows = db.selectFrom('app_credentials').select(['client_id', 'secret_hash', 'app_id']);
  const apps = !readsApps
    ? []
    : appsOf === 'all'
      ? await inPages(
          (after) => appRows.where('apps.id', '>', after).orderBy('apps.id').limit(pageRows).execute(),
          pageRows,
          slices,
          (row) => row.id,
        )
      : await readIn(appIds, (ids) => appRows.where('apps.id', 'in', ids).execute());
  await slices.pause();
  const credentials = !readsApps
    ? []
    : appsOf === 'all'
      ? await inPages(
          (after) => credentialRows.where('client_id', '>', after).orderBy('client_id').limit(pageRows).execute(),
          pageRows,
          slices,
          (row) => row.client_id,
        )
      : await readIn(appIds, (ids) => credentialRows.where('app_id', 'in', ids).execute());
  return {
    change,
    catalogs,
    products,
    plans,
    productApis,
    apis,
    apps,
    appsOf,
    credentials,
    subscriptions,
    subscriptionsOf,
    userRegistries: await slices.pause().then(() => loadCatalogRegistries(db)),
    oauth: await loadOAuth(db),
    base: { change, missing: since.missing, productStamps: stamps },
  };
}
