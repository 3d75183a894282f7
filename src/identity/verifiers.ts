/**
 * Compiles the user registries a catalog enables into verifiers, once per snapshot. A registry
 * whose TLS profile is not configured compiles into a refusal: an operation naming it is
 * refused, never served open.
 */
import { authUrlVerifier } from './authurl.ts';
import type { TlsMaterial } from './authurl.ts';
import { ldapVerifier } from './ldap.ts';
import type { AuthUrlConfiguration, LdapConfiguration, RegistryType } from './registry-config.ts';
import type { UserVerifier } from './types.ts';
import type { VerdictCache } from './verdict-cache.ts';

/** A registry row as the snapshot reads it. */
export interface RegistryRecord {
  id: string;
  name: string;
  registry_type: RegistryType;
  configuration: string;
  updated_at: string;
  /** The provider org that owns it: its answers share that org's partition of the cache (the registry's own when absent). */
  org_id?: string;
}

/** A catalog's registries by name: a verifier, or why the registry cannot be used. */
export type CatalogRegistries = ReadonlyMap<string, UserVerifier | { refused: string }>;

export interface VerifierSettings {
  /**
   * The TLS profiles the registries' provider org may use (`tlsProfilesOf`, policies/invoke/
   * dispatchers.ts): one it may not use is refused like one the gateway does not have.
   */
  tlsProfiles: Record<string, TlsMaterial>;
  cache?: VerdictCache;
}

/** One registry compiled; its version (id and last update) keys its cached answers. */
export function compileRegistry(
  record: RegistryRecord,
  settings: VerifierSettings,
): UserVerifier | { refused: string } {
  const config = JSON.parse(record.configuration) as AuthUrlConfiguration | LdapConfiguration;
  const profile = config.tls_profile;
  if (profile !== undefined && !Object.hasOwn(settings.tlsProfiles, profile)) {
    return {
      refused: `user registry ${record.name} names TLS profile ${profile}, which PORTICO_TLS_PROFILES does not define`,
    };
  }
  const tls = profile === undefined ? undefined : settings.tlsProfiles[profile];
  const version = `${record.id}|${record.updated_at}`;
  // One tenant's churn evicts its own answers first, never a smaller tenant's (verdict-cache.ts).
  const cache = settings.cache?.partition(record.org_id ?? record.id);
  return record.registry_type === 'authurl'
    ? authUrlVerifier(record.name, version, config as AuthUrlConfiguration, tls, cache)
    : ldapVerifier(record.name, version, config as LdapConfiguration, tls, cache);
}

/** A catalog's registries compiled, by name. */
export function compileRegistries(records: readonly RegistryRecord[], settings: VerifierSettings): CatalogRegistries {
  return new Map(records.map((record) => [record.name, compileRegistry(record, settings)]));
}
