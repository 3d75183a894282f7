/**
 * Reads, in a handful of bulk queries, everything a gateway compiles into its snapshot: the
 * catalogs, their published (and deprecated) products with plans, the online APIs they
 * bundle, and the consumer side (apps, credentials, live subscriptions).
 */
import type { Db } from './store.ts';
import type {
  ApiRow,
  OAuthKeyRow,
  OAuthProviderRow,
  PlanRow,
  ProductRow,
  SubscriptionState,
  UserRegistryRow,
} from './schema.ts';
import { loadCatalogProviders, loadKeys, loadRevocations } from './oauth.ts';
import { latestChange } from './changes.ts';
import { loadCatalogRegistries } from './user-registries.ts';

export interface SnapshotData {
  change: number;
  catalogs: Array<{ id: string; name: string; orgId: string; orgName: string }>;
  products: ProductRow[];
  plans: PlanRow[];
  productApis: Array<{ product_id: string; api_id: string; api_key: string }>;
  apis: ApiRow[];
  apps: Array<{
    id: string;
    title: string;
    consumer_org_id: string;
    consumer_org_name: string;
    consumer_org_title: string;
    redirect_uris?: string;
    catalog_id?: string;
  }>;
  credentials: Array<{ client_id: string; secret_hash: string; app_id: string }>;
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

/** Loads the snapshot data; run it in `Store.consistentRead` so the parts agree with each other. */
export async function loadSnapshotData(db: Db): Promise<SnapshotData> {
  const change = await latestChange(db);
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
    const none = { plans: [], productApis: [], apis: [], apps: [], credentials: [], subscriptions: [] };
    return { change, catalogs, products, ...none, userRegistries: [], oauth: await loadOAuth(db) };
  }
  const plans = await db.selectFrom('plans').selectAll().where('product_id', 'in', productIds).execute();
  const productApis = await db.selectFrom('product_apis').selectAll().where('product_id', 'in', productIds).execute();
  const apiIds = [...new Set(productApis.map((p) => p.api_id))];
  const apis =
    apiIds.length === 0
      ? []
      : await db.selectFrom('apis').selectAll().where('id', 'in', apiIds).where('state', '=', 'online').execute();
  const subscriptions = await db
    .selectFrom('subscriptions')
    .select(['id', 'app_id', 'product_id', 'plan_id', 'state'])
    .where('state', 'in', ['active', 'pending'])
    .execute();
  const apps = await db
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
    ])
    .execute();
  const credentials = await db.selectFrom('app_credentials').select(['client_id', 'secret_hash', 'app_id']).execute();
  const userRegistries = await loadCatalogRegistries(db);
  const oauth = await loadOAuth(db);
  return {
    change,
    catalogs,
    products,
    plans,
    productApis,
    apis,
    apps,
    credentials,
    subscriptions,
    userRegistries,
    oauth,
  };
}
