/**
 * The store's tables, as Kysely sees them. Ids are text (UUIDs), timestamps of records are
 * ISO-8601 text, booleans are 0/1 integers, documents are JSON text: one representation that
 * SQLite and PostgreSQL read and write the same way. Analytics time is epoch milliseconds
 * (a bigint in PostgreSQL, read back as a number) because the console queries ranges of it.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export type ApiState = 'offline' | 'online';
export type ProductState = 'staged' | 'published' | 'deprecated' | 'retired' | 'archived';
export type SubscriptionState = 'pending' | 'active' | 'rejected' | 'cancelled';
export type Visibility = 'public' | 'authenticated' | 'custom';
/** A console or portal cookie session, or a management API token (pre-sessions are not stored: web/pre-session.ts). */
export type SessionKind = 'provider' | 'portal' | 'token';
/** A provider user's role, after API Connect's provider organization roles. */
export type ProviderRole = 'owner' | 'administrator' | 'developer' | 'community-manager' | 'viewer';

export interface ProviderOrgTable {
  id: string;
  name: string;
  title: string;
  created_at: string;
}

export interface CatalogTable {
  id: string;
  org_id: string;
  name: string;
  title: string;
  created_at: string;
}

export interface ProviderUserTable {
  id: string;
  org_id: string;
  username: string;
  email: string;
  password_hash: string;
  created_at: string;
  /** What the user may do in the org (src/services/provider/roles.ts); migration 0018. */
  role: ProviderRole;
}

/** Short-lived values of a web session: a secret to show once (flash), the subscribe wizard's place. */
export interface SessionValueTable {
  session_id: string;
  name: string;
  value: string;
  expires_at: number;
}

export interface SessionTable {
  /** SHA-256 of the session token, hex; the token itself is never stored. */
  id: string;
  kind: SessionKind;
  user_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: number;
  /** Last recorded activity, epoch ms, updated at most once a minute; web sessions idle too long end. */
  last_seen: number;
}

export interface ApiTable {
  id: string;
  org_id: string;
  name: string;
  version: string;
  title: string;
  base_path: string;
  state: ApiState;
  /** The definition document as JSON text. */
  document: string;
  /** Files the document refers to (WSDL, XSD) by name, as JSON `{name: text}`. */
  attachments: string;
  created_at: string;
  updated_at: string;
}

export interface ProductTable {
  id: string;
  catalog_id: string;
  name: string;
  version: string;
  title: string;
  state: ProductState;
  view_type: Visibility;
  subscribe_type: Visibility;
  /** Consumer org names allowed when a visibility is `custom`, JSON arrays. */
  view_orgs: string;
  subscribe_orgs: string;
  document: string;
  created_at: string;
  updated_at: string;
}

export interface ProductApiTable {
  product_id: string;
  api_id: string;
  /** The key the product document gives the API. */
  api_key: string;
}

export interface PlanTable {
  id: string;
  product_id: string;
  name: string;
  title: string;
  description: string;
  approval: number;
  /** RateLimitDef[] as JSON. */
  rate_limits: string;
  burst_limits: string;
  position: number;
}

export interface ConsumerOrgTable {
  id: string;
  catalog_id: string;
  name: string;
  title: string;
  owner_id: string | null;
  /** 1 when a provider created it (custom visibility lists may name it), 0 when self-registered. */
  provider_created: Generated<number>;
  created_at: string;
}

export interface PortalUserTable {
  id: string;
  catalog_id: string;
  consumer_org_id: string;
  email: string;
  name: string;
  password_hash: string;
  created_at: string;
  /** When the owner proved the address by an emailed link; null until then. */
  email_verified_at: string | null;
}

export type AccountTokenPurpose = 'verify-email' | 'reset-password';

/** One-time links emailed to a portal user; only the token's SHA-256 is kept. */
export interface AccountTokenTable {
  token_hash: string;
  user_id: string;
  purpose: AccountTokenPurpose;
  expires_at: number;
  created_at: string;
}

export interface AppTable {
  id: string;
  consumer_org_id: string;
  title: string;
  description: string;
  created_at: string;
  /** JSON list of the app's registered OAuth redirect URIs (RFC 6749 §3.1.2), matched exactly. */
  redirect_uris: Generated<string>;
}

export interface AppCredentialTable {
  id: string;
  app_id: string;
  client_id: string;
  /** SHA-256 of the client secret, hex: secrets are 256-bit random, so a fast hash is safe. */
  secret_hash: string;
  description: string;
  created_at: string;
}

export interface SubscriptionTable {
  id: string;
  app_id: string;
  product_id: string;
  plan_id: string;
  state: SubscriptionState;
  created_at: string;
  updated_at: string;
}

/** The `activity_events` view: each call with its scope's columns (read only; writes go to the two tables). */
export interface ActivityEventTable {
  id: Generated<number>;
  ts: number;
  tx_id: string;
  org_name: string;
  catalog_name: string;
  api_name: string;
  api_version: string;
  operation_id: string;
  verb: string;
  path: string;
  status: number;
  latency_ms: number;
  backend_ms: number;
  client_id: string;
  app_id: string;
  app_name: string;
  /** The ids analytics group by (issue 16): names repeat across consumer orgs and products. */
  consumer_org_id: Generated<string>;
  consumer_org_name: string;
  subscription_id: Generated<string>;
  product_name: string;
  plan_id: Generated<string>;
  plan_name: string;
  error_name: string;
  /** The user a basic scheme or user-security policy authenticated ('' when none). */
  user_name: Generated<string>;
  /** What was recorded: none, activity, header, payload. */
  content: string;
  request_headers: string | null;
  request_body: string | null;
  response_headers: string | null;
  response_body: string | null;
}

/**
 * What is the same for every call of one subscription to one operation (issue 18): the calls
 * point at it (`activity_calls.scope_id`), and the `activity_events` view joins the two.
 */
export interface ActivityScopeTable {
  id: Generated<number>;
  org_name: string;
  catalog_name: string;
  api_name: string;
  api_version: string;
  operation_id: string;
  app_id: string;
  app_name: string;
  consumer_org_id: string;
  consumer_org_name: string;
  subscription_id: string;
  plan_id: string;
  product_name: string;
  plan_name: string;
}

/** One call's own values; the rest are its scope's. */
export interface ActivityCallTable {
  id: Generated<number>;
  scope_id: number;
  ts: number;
  tx_id: string;
  verb: string;
  path: string;
  status: number;
  latency_ms: number;
  backend_ms: number;
  client_id: string;
  user_name: string;
  error_name: string;
  content: string;
  request_headers: string | null;
  request_body: string | null;
  response_headers: string | null;
  response_body: string | null;
}

/** Hourly rollup of activity events by the console's dimensions (see rollup.ts). */
export interface ActivityRollupTable {
  bucket_ts: number;
  org_name: string;
  catalog_name: string;
  api_name: string;
  operation_id: string;
  status: number;
  app_id: string;
  app_name: string;
  plan_id: string;
  plan_name: string;
  product_name: string;
  subscription_id: string;
  consumer_org_id: string;
  consumer_org_name: string;
  calls: number;
  latency_sum: number;
  /** Calls per latency bucket (rollup.ts latencyBounds). */
  h0: number;
  h1: number;
  h2: number;
  h3: number;
  h4: number;
  h5: number;
  h6: number;
  h7: number;
  h8: number;
  h9: number;
  h10: number;
  h11: number;
  h12: number;
  h13: number;
  /** The part of `calls` the plan's limits counted (migration 0014; the portal's "used"). */
  plan_calls: number;
}

export interface ChangeTable {
  /** A monotonically growing change counter, so gateways can tell they are behind. */
  id: Generated<number>;
  ts: number;
  kind: string;
  /** What the change touched, when a gateway can read only that again (a product or app id); null otherwise. */
  ref: string | null;
}

/** A user registry (authentication URL or LDAP) of a provider org, as a JSON configuration. */
export interface UserRegistryTable {
  id: string;
  org_id: string;
  name: string;
  title: string;
  registry_type: 'authurl' | 'ldap';
  /** The validated configuration as JSON text, secrets included (never returned by the API). */
  configuration: string;
  created_at: string;
  updated_at: string;
}

/** A catalog's API user registries: which of the org's registries its APIs may name. */
export interface CatalogUserRegistryTable {
  catalog_id: string;
  registry_id: string;
}

export interface OAuthProviderTable {
  id: string;
  org_id: string;
  name: string;
  title: string;
  /** The validated provider file as JSON text (src/oauth/provider-config.ts). */
  configuration: string;
  created_at: string;
  updated_at: string;
}

export interface CatalogOAuthProviderTable {
  catalog_id: string;
  provider_id: string;
}

export interface OAuthKeyTable {
  kid: string;
  provider_id: string;
  /** The ES256 private key as a JWK (the gateways sign with it). */
  private_jwk: string;
  created_at: number;
  /** When a newer key replaced it: it still verifies until the tokens it signed expire. */
  retired_at: number | null;
}

export interface OAuthCodeTable {
  code_hash: string;
  grant_id: string;
  provider_id: string;
  catalog_id: string;
  client_id: string;
  redirect_uri: string;
  /** 1 when the authorization request named `redirect_uri` (RFC 6749 §4.1.3: the token request must repeat it). */
  redirect_uri_named: number;
  scope: string;
  username: string;
  challenge: string | null;
  challenge_method: string | null;
  expires_at: number;
  used: Generated<number>;
}

export interface OAuthRefreshTokenTable {
  token_hash: string;
  grant_id: string;
  provider_id: string;
  catalog_id: string;
  client_id: string;
  scope: string;
  username: string;
  expires_at: number;
  used: Generated<number>;
  /** 1: issued to a public client (no secret, PKCE), refreshed without a secret; 0: the client must authenticate. */
  public_client: Generated<number>;
}

export interface OAuthRevocationTable {
  /** An access token's `jti`, or a grant id that revokes every token of the grant. */
  token_id: string;
  expires_at: number;
}

/** Per-installation secret keys every node shares, created on first use (store/server-keys.ts). */
export interface ServerKeyTable {
  name: string;
  /** 256 random bits, base64url. */
  key: string;
  created_at: string;
}

export interface Database {
  oauth_providers: OAuthProviderTable;
  catalog_oauth_providers: CatalogOAuthProviderTable;
  oauth_keys: OAuthKeyTable;
  oauth_codes: OAuthCodeTable;
  oauth_refresh_tokens: OAuthRefreshTokenTable;
  oauth_revocations: OAuthRevocationTable;
  user_registries: UserRegistryTable;
  catalog_user_registries: CatalogUserRegistryTable;
  provider_orgs: ProviderOrgTable;
  catalogs: CatalogTable;
  provider_users: ProviderUserTable;
  sessions: SessionTable;
  session_values: SessionValueTable;
  apis: ApiTable;
  products: ProductTable;
  product_apis: ProductApiTable;
  plans: PlanTable;
  consumer_orgs: ConsumerOrgTable;
  portal_users: PortalUserTable;
  account_tokens: AccountTokenTable;
  apps: AppTable;
  app_credentials: AppCredentialTable;
  subscriptions: SubscriptionTable;
  activity_events: ActivityEventTable;
  activity_scopes: ActivityScopeTable;
  activity_calls: ActivityCallTable;
  activity_rollup: ActivityRollupTable;
  changes: ChangeTable;
  server_keys: ServerKeyTable;
}

export type ProviderOrg = Selectable<ProviderOrgTable>;
export type Catalog = Selectable<CatalogTable>;
export type ProviderUser = Selectable<ProviderUserTable>;
export type Session = Selectable<SessionTable>;
export type ApiRow = Selectable<ApiTable>;
export type OAuthProviderRow = Selectable<OAuthProviderTable>;
export type OAuthKeyRow = Selectable<OAuthKeyTable>;
export type ProductRow = Selectable<ProductTable>;
export type PlanRow = Selectable<PlanTable>;
export type ConsumerOrg = Selectable<ConsumerOrgTable>;
export type PortalUser = Selectable<PortalUserTable>;
export type App = Selectable<AppTable>;
export type AppCredential = Selectable<AppCredentialTable>;
export type Subscription = Selectable<SubscriptionTable>;
export type ActivityEvent = Selectable<ActivityEventTable>;
export type NewActivityEvent = Insertable<ActivityEventTable>;
export type ApiUpdate = Updateable<ApiTable>;

export type UserRegistryRow = Selectable<UserRegistryTable>;
