/**
 * Native OAuth providers as the gateway's snapshot holds them: per catalog, each enabled
 * provider with its settings, the keys that still verify, its signing key and the user
 * registry that signs resource owners in. {@link checkAccessToken} is the whole per-call check.
 */
import type { CatalogRegistries } from '../identity/verifiers.ts';
import type { UserVerifier } from '../identity/types.ts';
import type { OAuthKeyRow, OAuthProviderRow } from '../store/schema.ts';
import { signingKey, verifySignature } from './keys.ts';
import type { AccessClaims, SigningKey } from './keys.ts';
import { providerConfig } from './provider-config.ts';
import type { ProviderConfig } from './provider-config.ts';

export interface CompiledProvider {
  id: string;
  config: ProviderConfig;
  orgName: string;
  catalogName: string;
  catalogId: string;
  /** `/org/catalog/basePath`: the issuer's path; the issuer is the gateway's origin followed by it. */
  issuerPath: string;
  /** `/org/catalog`: the audience's path (the catalog's APIs are the resource server). */
  audiencePath: string;
  /** Every key that still verifies, by kid. */
  keys: ReadonlyMap<string, SigningKey>;
  /** The key new tokens are signed with. */
  current: SigningKey | undefined;
  /** The registry that authenticates resource owners, or why it cannot. */
  registry: UserVerifier | { refused: string } | undefined;
}

export interface CatalogProviders {
  byName: ReadonlyMap<string, CompiledProvider>;
  /** Providers by base path, for the gateway's routing of their endpoints. */
  byBasePath: ReadonlyMap<string, CompiledProvider>;
  /** Changes when any provider or key of the catalog does: compiled APIs that name one recompile. */
  stamp: string;
}

interface CatalogFacts {
  id: string;
  name: string;
  orgName: string;
}

/** Compiles every catalog's providers; a provider whose file no longer checks is left out and logged by the caller. */
export function compileProviders(
  rows: ReadonlyArray<OAuthProviderRow & { catalog_id: string }>,
  keyRows: readonly OAuthKeyRow[],
  catalogs: ReadonlyMap<string, CatalogFacts>,
  registries: (catalogId: string) => CatalogRegistries | undefined,
  onError: (provider: string, reason: string) => void,
): Map<string, CatalogProviders> {
  const keysOf = new Map<string, OAuthKeyRow[]>();
  for (const row of keyRows) {
    const list = keysOf.get(row.provider_id);
    if (list) list.push(row);
    else keysOf.set(row.provider_id, [row]);
  }
  const out = new Map<
    string,
    { byName: Map<string, CompiledProvider>; byBasePath: Map<string, CompiledProvider>; stamp: string[] }
  >();
  for (const row of rows) {
    const catalog = catalogs.get(row.catalog_id);
    if (catalog === undefined) continue;
    let config: ProviderConfig;
    try {
      config = providerConfig(JSON.parse(row.configuration) as Record<string, unknown>);
    } catch (error) {
      onError(row.name, (error as Error).message);
      continue;
    }
    const keys = liveKeys(keysOf.get(row.id) ?? [], config.accessTokenTtl);
    const compiled: CompiledProvider = {
      id: row.id,
      config,
      orgName: catalog.orgName,
      catalogName: catalog.name,
      catalogId: catalog.id,
      issuerPath: `/${catalog.orgName}/${catalog.name}${config.basePath}`,
      audiencePath: `/${catalog.orgName}/${catalog.name}`,
      keys: keys.all,
      current: keys.current,
      registry:
        config.userRegistry === undefined ? undefined : registryFor(config.userRegistry, registries(catalog.id)),
    };
    let entry = out.get(catalog.id);
    if (entry === undefined) out.set(catalog.id, (entry = { byName: new Map(), byBasePath: new Map(), stamp: [] }));
    entry.byName.set(config.name, compiled);
    entry.byBasePath.set(config.basePath, compiled);
    entry.stamp.push(`${row.id}@${row.updated_at}:${[...keys.all.keys()].join('+')}`);
  }
  const result = new Map<string, CatalogProviders>();
  for (const [id, entry] of out)
    result.set(id, {
      byName: entry.byName,
      byBasePath: entry.byBasePath,
      stamp: entry.stamp.sort().join(','),
    });
  return result;
}

function liveKeys(
  rows: readonly OAuthKeyRow[],
  ttlSeconds: number,
): { all: Map<string, SigningKey>; current: SigningKey | undefined } {
  const all = new Map<string, SigningKey>();
  let current: SigningKey | undefined;
  const oldest = Date.now() - ttlSeconds * 1000;
  for (const row of rows) {
    // A retired key verifies only while a token it signed can still be unexpired.
    if (row.retired_at !== null && Number(row.retired_at) <= oldest) continue;
    const key = signingKey(row.kid, row.private_jwk);
    all.set(row.kid, key);
    if (row.retired_at === null) current = key;
  }
  return { all, current };
}

function registryFor(name: string, registries: CatalogRegistries | undefined): UserVerifier | { refused: string } {
  const registry = registries?.get(name);
  return registry ?? { refused: `user registry ${name} is not enabled in the catalog` };
}

/** `https://host:port` followed by exactly `path`. */
function originThen(value: unknown, path: string): boolean {
  if (typeof value !== 'string' || !value.endsWith(path)) return false;
  return /^https?:\/\/[^/?#@]+$/.test(value.slice(0, value.length - path.length));
}

/**
 * The claims of a valid access token of `provider`: signed by one of its live keys, unexpired,
 * issued by this provider in this catalog (a token of another catalog or provider is refused
 * even where the keys are shared), and neither it nor its grant revoked.
 */
export function checkAccessToken(
  provider: CompiledProvider,
  token: string,
  revoked: ReadonlySet<string>,
  nowSeconds = Math.floor(Date.now() / 1000),
): AccessClaims | undefined {
  const claims = verifySignature(token, provider.keys);
  if (claims === undefined || claims.exp <= nowSeconds) return undefined;
  if (!originThen(claims.iss, provider.issuerPath) || !originThen(claims.aud, provider.audiencePath)) return undefined;
  if (revoked.has(claims.jti) || revoked.has(claims.grant_id)) return undefined;
  return claims;
}
