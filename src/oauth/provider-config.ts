/**
 * The native OAuth provider file, in the shape `apic oauth-providers:create` accepts (IBM "apic
 * oauth-providers:create", native example): `name`, `title`, `provider_type: native`, `grants`,
 * `clients`, `scopes`, and under `native_provider` the backing API's `api.basePath`,
 * `authorize_path`, `token_path`, `pkce`, token lifetimes and the user registry that
 * authenticates resource owners. Checked once when written; the gateway trusts the result.
 */
import { PorticoError } from '../errors.ts';
import { isRecord } from '../definitions/json-path.ts';

/** API Connect's grant names: `application` = client credentials, `access_code` = authorization code. */
export type Grant = 'application' | 'access_code' | 'password';
export type ClientType = 'confidential' | 'public';

/** A provider as the gateway runs it. */
export interface ProviderConfig {
  name: string;
  title: string;
  grants: readonly Grant[];
  clients: readonly ClientType[];
  /** Scope name → description. */
  scopes: Readonly<Record<string, string>>;
  /** The backing API's base path below the catalog, e.g. `/oauth` (never `/` alone: it would shadow APIs). */
  basePath: string;
  authorizePath: string;
  tokenPath: string;
  pkce: { enabled: boolean; required: boolean; allowPlain: boolean };
  /** Seconds. */
  accessTokenTtl: number;
  refreshToken: { enabled: boolean; ttl: number };
  /** Seconds an authorization code lives. */
  codeTtl: number;
  /** The user registry (enabled in the catalog) that signs resource owners in. */
  userRegistry?: string;
}

/** The longest `access_token_ttl` a provider may set, in seconds: no access token outlives it. */
export const maxAccessTokenTtl = 86_400;

const grants: readonly Grant[] = ['application', 'access_code', 'password'];
const clientTypes: readonly ClientType[] = ['confidential', 'public'];
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const scopeToken = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const pathPattern = /^(\/[A-Za-z0-9._~-]+)+$/;
const namePattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
const topFields = new Set([
  'name',
  'title',
  'provider_type',
  'grants',
  'clients',
  'scopes',
  'native_provider',
  'gateway_version',
  'summary',
  'description',
]);
const nativeFields = new Set([
  'api',
  'authorize_path',
  'token_path',
  'pkce',
  'access_token_ttl',
  'refresh_token',
  'code_ttl',
  'user_registry',
  'native_provider_5000',
]);

function invalid(field: string, reason: string): PorticoError {
  return new PorticoError('MGMT_VALIDATION', { field, reason });
}

function listOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T[] {
  if (!Array.isArray(value) || value.length === 0) throw invalid(field, `a non-empty list of ${allowed.join(', ')}`);
  for (const item of value) {
    if (!allowed.includes(item as T)) throw invalid(field, `${String(item)} is not one of ${allowed.join(', ')}`);
  }
  return [...new Set(value as T[])];
}

function seconds(value: unknown, field: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max)
    throw invalid(field, `whole seconds, 1 to ${max}`);
  return value as number;
}

function path(value: unknown, field: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !pathPattern.test(value)) throw invalid(field, 'a path like /oauth2/token');
  return value;
}

function flag(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(field, 'true or false');
  return value;
}

function scopesOf(value: unknown): Record<string, string> {
  if (!isRecord(value) || Object.keys(value).length === 0)
    throw invalid('scopes', 'an object of scope name: description');
  for (const [name, description] of Object.entries(value)) {
    if (!scopeToken.test(name)) throw invalid('scopes', `${name} is not a scope token (RFC 6749 §3.3)`);
    if (typeof description !== 'string') throw invalid(`scopes.${name}`, 'a description');
  }
  return value as Record<string, string>;
}

/** Checks a provider file; returns the file to store (normalised) and the provider it describes. */
export function checkProviderFile(input: unknown): { file: Record<string, unknown>; config: ProviderConfig } {
  if (!isRecord(input)) throw invalid('provider', 'an object (the provider file)');
  const unknown = Object.keys(input).filter((key) => !topFields.has(key));
  if (unknown.length > 0) throw invalid(unknown[0], 'is not a field of a native OAuth provider');
  if (input.provider_type !== undefined && input.provider_type !== 'native') {
    throw invalid('provider_type', 'only native; a third-party provider is named by x-tokenIntrospect in the API');
  }
  const config = providerConfig(input);
  return { file: { ...input, provider_type: 'native' }, config };
}

/** The provider a stored (checked) file describes. */
export function providerConfig(file: Record<string, unknown>): ProviderConfig {
  const { name, title } = file;
  if (typeof name !== 'string' || !namePattern.test(name)) throw invalid('name', 'lower-case letters, digits and -');
  const native = file.native_provider ?? {};
  if (!isRecord(native)) throw invalid('native_provider', 'an object');
  const extra = Object.keys(native).filter((key) => !nativeFields.has(key));
  if (extra.length > 0) throw invalid(`native_provider.${extra[0]}`, 'is not a field of a native OAuth provider');
  const api = isRecord(native.api) ? native.api : {};
  const basePath = path(api.basePath, 'native_provider.api.basePath', `/${name}`);
  const pkce = isRecord(native.pkce) ? native.pkce : {};
  const refresh = isRecord(native.refresh_token) ? native.refresh_token : {};
  const registry = native.user_registry;
  if (registry !== undefined && (typeof registry !== 'string' || registry === '')) {
    throw invalid('native_provider.user_registry', 'the name of a user registry');
  }
  const config: ProviderConfig = {
    name,
    title: typeof title === 'string' && title !== '' ? title : name,
    grants: listOf(file.grants, 'grants', grants),
    clients: listOf(file.clients ?? ['confidential'], 'clients', clientTypes),
    scopes: scopesOf(file.scopes),
    basePath,
    authorizePath: path(native.authorize_path, 'native_provider.authorize_path', '/oauth2/authorize'),
    tokenPath: path(native.token_path, 'native_provider.token_path', '/oauth2/token'),
    pkce: {
      enabled: flag(pkce.enabled, 'native_provider.pkce.enabled', true),
      required: flag(pkce.required, 'native_provider.pkce.required', false),
      allowPlain: flag(pkce.allow_plain, 'native_provider.pkce.allow_plain', false),
    },
    accessTokenTtl: seconds(native.access_token_ttl, 'native_provider.access_token_ttl', 3600, maxAccessTokenTtl),
    refreshToken: {
      enabled: flag(refresh.enabled, 'native_provider.refresh_token.enabled', true),
      ttl: seconds(refresh.ttl, 'native_provider.refresh_token.ttl', 2_682_000, 31_536_000),
    },
    codeTtl: seconds(native.code_ttl, 'native_provider.code_ttl', 300, 600),
    userRegistry: registry as string | undefined,
  };
  const needsUser = config.grants.includes('access_code') || config.grants.includes('password');
  if (needsUser && config.userRegistry === undefined) {
    throw invalid(
      'native_provider.user_registry',
      'access_code and password grants authenticate resource owners against a user registry',
    );
  }
  if (config.clients.includes('public') && !config.pkce.enabled) {
    throw invalid('native_provider.pkce.enabled', 'public clients need PKCE (RFC 7636)');
  }
  if (config.authorizePath === config.tokenPath)
    throw invalid('native_provider.token_path', 'differs from authorize_path');
  return config;
}
