/**
 * The native OAuth provider's rows: providers and the catalogs that enable them, signing keys,
 * authorization codes and refresh tokens (by SHA-256 hash: never in clear), and the revoked
 * token ids the gateways refuse until those tokens would have expired anyway.
 */
import type { Db } from './store.ts';
import type { OAuthCodeTable, OAuthKeyRow, OAuthProviderRow } from './schema.ts';
import { newId, now } from './secrets.ts';

export async function insertProvider(
  db: Db,
  input: { orgId: string; name: string; title: string; configuration: Record<string, unknown> },
): Promise<OAuthProviderRow> {
  const at = now();
  const row: OAuthProviderRow = {
    id: newId(),
    org_id: input.orgId,
    name: input.name,
    title: input.title,
    configuration: JSON.stringify(input.configuration),
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('oauth_providers').values(row).execute();
  return row;
}

export async function updateProvider(
  db: Db,
  id: string,
  input: { title: string; configuration: Record<string, unknown> },
) {
  const values = {
    title: input.title,
    configuration: JSON.stringify(input.configuration),
    updated_at: now(),
  };
  await db.updateTable('oauth_providers').set(values).where('id', '=', id).execute();
}

export async function deleteProvider(db: Db, id: string): Promise<void> {
  await db.deleteFrom('catalog_oauth_providers').where('provider_id', '=', id).execute();
  await db.deleteFrom('oauth_keys').where('provider_id', '=', id).execute();
  await db.deleteFrom('oauth_providers').where('id', '=', id).execute();
}

export function findProvider(db: Db, orgId: string, name: string): Promise<OAuthProviderRow | undefined> {
  return db
    .selectFrom('oauth_providers')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export function listProviders(db: Db, orgId: string): Promise<OAuthProviderRow[]> {
  return db.selectFrom('oauth_providers').selectAll().where('org_id', '=', orgId).orderBy('name').execute();
}

export function listCatalogProviders(db: Db, catalogId: string): Promise<OAuthProviderRow[]> {
  return db
    .selectFrom('catalog_oauth_providers')
    .innerJoin('oauth_providers', 'oauth_providers.id', 'catalog_oauth_providers.provider_id')
    .selectAll('oauth_providers')
    .where('catalog_oauth_providers.catalog_id', '=', catalogId)
    .orderBy('oauth_providers.name')
    .execute();
}

export async function enableInCatalog(db: Db, catalogId: string, providerId: string): Promise<void> {
  const existing = await db
    .selectFrom('catalog_oauth_providers')
    .select('provider_id')
    .where('catalog_id', '=', catalogId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
  if (!existing)
    await db.insertInto('catalog_oauth_providers').values({ catalog_id: catalogId, provider_id: providerId }).execute();
}

export async function disableInCatalog(db: Db, catalogId: string, providerId: string): Promise<void> {
  await db
    .deleteFrom('catalog_oauth_providers')
    .where('catalog_id', '=', catalogId)
    .where('provider_id', '=', providerId)
    .execute();
}

/** Every catalog's enabled providers, for the gateway's snapshot. */
export function loadCatalogProviders(db: Db): Promise<Array<OAuthProviderRow & { catalog_id: string }>> {
  return db
    .selectFrom('catalog_oauth_providers')
    .innerJoin('oauth_providers', 'oauth_providers.id', 'catalog_oauth_providers.provider_id')
    .selectAll('oauth_providers')
    .select('catalog_oauth_providers.catalog_id')
    .execute();
}

/** Adds a signing key and retires the provider's current one (it keeps verifying until its tokens expire). */
export async function addKey(db: Db, providerId: string, kid: string, privateJwk: string, at: number): Promise<void> {
  await db
    .updateTable('oauth_keys')
    .set({ retired_at: at })
    .where('provider_id', '=', providerId)
    .where('retired_at', 'is', null)
    .execute();
  await db
    .insertInto('oauth_keys')
    .values({ kid, provider_id: providerId, private_jwk: privateJwk, created_at: at, retired_at: null })
    .execute();
}

/** Keys still in use: the current one, and retired ones whose tokens may not have expired yet. */
export function loadKeys(db: Db, retiredSince: number): Promise<OAuthKeyRow[]> {
  return db
    .selectFrom('oauth_keys')
    .selectAll()
    .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', retiredSince)]))
    .orderBy('created_at')
    .execute();
}

/**
 * An authorization code: `redirect_uri` is where it was sent, `redirect_uri_named` (1/0) whether
 * the authorization request named it (RFC 6749 §4.1.3: only then must the token request repeat it).
 */
export type CodeRow = Omit<OAuthCodeTable, 'used'>;

export async function insertCode(db: Db, row: CodeRow): Promise<void> {
  await db
    .insertInto('oauth_codes')
    .values({ ...row, used: 0 })
    .execute();
}

/** A code as it stands, without using it (the token endpoint checks it before taking it). */
export async function findCode(db: Db, codeHash: string): Promise<(CodeRow & { used: number }) | undefined> {
  const row = await db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
  if (!row) return undefined;
  return {
    ...row,
    redirect_uri_named: Number(row.redirect_uri_named),
    expires_at: Number(row.expires_at),
    used: Number(row.used),
  };
}

/**
 * Whether a conditional "used = 1 where used = 0 and it is the client's" took the row: `first`
 * true when this call took it; false when it was taken before (a replay: RFC 6749 §4.1.2, the
 * grant is then revoked); undefined when no such row is the client's. The row is read again only
 * when the update took nothing, to tell a replay from a row that is gone.
 */
async function tookOnce(
  updatedRows: bigint,
  clientId: string,
  stored: () => Promise<{ client_id: string } | undefined>,
): Promise<{ first: boolean } | undefined> {
  if (Number(updatedRows) === 1) return { first: true };
  return (await stored())?.client_id === clientId ? { first: false } : undefined;
}

/** Takes a code once, and only for the client it was issued to (another client's attempt changes nothing): {@link tookOnce}. */
export async function takeCode(db: Db, codeHash: string, clientId: string): Promise<{ first: boolean } | undefined> {
  const updated = await db
    .updateTable('oauth_codes')
    .set({ used: 1 })
    .where('code_hash', '=', codeHash)
    .where('client_id', '=', clientId)
    .where('used', '=', 0)
    .executeTakeFirst();
  return tookOnce(updated.numUpdatedRows, clientId, () => findCode(db, codeHash));
}

export interface RefreshRow {
  token_hash: string;
  grant_id: string;
  provider_id: string;
  catalog_id: string;
  client_id: string;
  scope: string;
  username: string;
  expires_at: number;
  /** 1: issued to a public client (no secret; PKCE), so refreshed without one. 0: the client must authenticate. */
  public_client: number;
}

/** A refresh token to store: `public_client` defaults to 0 (the client must authenticate to refresh). */
export async function insertRefreshToken(
  db: Db,
  row: Omit<RefreshRow, 'public_client'> & { public_client?: number },
): Promise<void> {
  await db
    .insertInto('oauth_refresh_tokens')
    .values({ ...row, used: 0 })
    .execute();
}

/** Uses a refresh token once (rotation), and only for the client it was issued to: {@link tookOnce}. */
export async function takeRefreshToken(
  db: Db,
  tokenHash: string,
  clientId: string,
): Promise<{ first: boolean } | undefined> {
  const updated = await db
    .updateTable('oauth_refresh_tokens')
    .set({ used: 1 })
    .where('token_hash', '=', tokenHash)
    .where('client_id', '=', clientId)
    .where('used', '=', 0)
    .executeTakeFirst();
  return tookOnce(updated.numUpdatedRows, clientId, () => findRefreshToken(db, tokenHash));
}

/** A refresh token as it stands, without using it (introspection; the client check before a refresh). */
export async function findRefreshToken(
  db: Db,
  tokenHash: string,
): Promise<(RefreshRow & { used: number }) | undefined> {
  const row = await db
    .selectFrom('oauth_refresh_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    ...row,
    expires_at: Number(row.expires_at),
    used: Number(row.used),
    public_client: Number(row.public_client),
  };
}

/**
 * Revokes a grant: its refresh tokens can no longer be used, and its id joins the revoked set,
 * so access tokens carrying it are refused by every gateway until `accessExpiresAt`.
 */
export async function revokeGrant(db: Db, grantId: string, accessExpiresAt: number): Promise<void> {
  await db.updateTable('oauth_refresh_tokens').set({ used: 1 }).where('grant_id', '=', grantId).execute();
  await db.updateTable('oauth_codes').set({ used: 1 }).where('grant_id', '=', grantId).execute();
  await insertRevocation(db, grantId, accessExpiresAt);
}

export async function insertRevocation(db: Db, tokenId: string, expiresAt: number): Promise<void> {
  const existing = await db
    .selectFrom('oauth_revocations')
    .select('token_id')
    .where('token_id', '=', tokenId)
    .executeTakeFirst();
  if (existing)
    await db.updateTable('oauth_revocations').set({ expires_at: expiresAt }).where('token_id', '=', tokenId).execute();
  else await db.insertInto('oauth_revocations').values({ token_id: tokenId, expires_at: expiresAt }).execute();
}

/** Revoked ids whose tokens have not expired (the gateway's revoked set). */
export async function loadRevocations(db: Db, at: number): Promise<string[]> {
  const rows = await db.selectFrom('oauth_revocations').select('token_id').where('expires_at', '>', at).execute();
  return rows.map((row) => row.token_id);
}

/** Drops what can no longer matter: expired revocations, codes and refresh tokens (`at` in seconds). How many rows went. */
export async function pruneExpired(db: Db, at: number): Promise<number> {
  let deleted = 0;
  for (const table of ['oauth_revocations', 'oauth_codes', 'oauth_refresh_tokens'] as const) {
    const result = await db.deleteFrom(table).where('expires_at', '<=', at).executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}
