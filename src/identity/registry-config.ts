/**
 * A user registry's configuration, in the shape `apic user-registries:create` reads (`name`,
 * `title`, `registry_type`, `configuration`), checked once when it is created or updated: the
 * gateway trusts it afterwards. Errors name the field and the reason.
 */
import { PorticoError } from '../errors.ts';

export type RegistryType = 'authurl' | 'ldap';

/** An authentication URL registry: 200 from the URL authenticates, any other status refuses. */
export interface AuthUrlConfiguration {
  url: string;
  /** Seconds before the call counts as the registry being down (503). */
  timeout: number;
  /** A PORTICO_TLS_PROFILES entry for an https URL. */
  tls_profile?: string;
}

/** An LDAP registry: search-then-bind (`search_dn`) or direct bind to a composed DN (`compose_dn`). */
export interface LdapConfiguration {
  /** `ldap://host:port` or `ldaps://host:port`. */
  url: string;
  /** Upgrade an `ldap://` connection with StartTLS before any credential is sent. */
  starttls: boolean;
  timeout: number;
  tls_profile?: string;
  authentication_method: 'search_dn' | 'compose_dn';
  admin_dn?: string;
  admin_password?: string;
  search_dn_base?: string;
  search_dn_scope: 'sub' | 'one' | 'base';
  search_dn_filter_prefix: string;
  search_dn_filter_suffix: string;
  bind_prefix?: string;
  bind_suffix?: string;
}

export type RegistryConfiguration = AuthUrlConfiguration | LdapConfiguration;

export interface RegistryInput {
  name: string;
  title: string;
  registry_type: RegistryType;
  configuration: RegistryConfiguration;
}

const namePattern = /^[a-z0-9][a-z0-9-]{0,62}$/;
const maxTimeout = 60;

function invalid(field: string, reason: string): PorticoError {
  return new PorticoError('MGMT_VALIDATION', { field, reason });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(config: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const value = config[field];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value === '') throw invalid(`configuration.${field}`, 'must be a non-empty string');
  if (value.length > 1024) throw invalid(`configuration.${field}`, 'must be at most 1024 characters');
  return value;
}

function timeout(config: Record<string, unknown>, fallback: number): number {
  const value = config.timeout ?? fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > maxTimeout) {
    throw invalid('configuration.timeout', `must be a whole number of seconds from 1 to ${maxTimeout}`);
  }
  return value;
}

function url(config: Record<string, unknown>, protocols: string[]): string {
  // API Connect's files carry the address as `endpoint.endpoint`; Portico's as `configuration.url`.
  const written = text(config, 'url', true)!;
  let parsed: URL;
  try {
    parsed = new URL(written);
  } catch {
    throw invalid('configuration.url', 'is not a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw invalid('configuration.url', `must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  if (parsed.username !== '' || parsed.password !== '')
    throw invalid('configuration.url', 'must not carry credentials');
  return written;
}

const authUrlFields = new Set(['url', 'timeout', 'tls_profile']);
const ldapFields = new Set([
  'url',
  'starttls',
  'timeout',
  'tls_profile',
  'authentication_method',
  'admin_dn',
  'admin_password',
  'search_dn_base',
  'search_dn_scope',
  'search_dn_filter_prefix',
  'search_dn_filter_suffix',
  'bind_prefix',
  'bind_suffix',
]);

function unknownFields(config: Record<string, unknown>, known: Set<string>): void {
  for (const field of Object.keys(config)) {
    if (!known.has(field)) throw invalid(`configuration.${field}`, 'is not a known field');
  }
}

function authUrlConfiguration(config: Record<string, unknown>): AuthUrlConfiguration {
  unknownFields(config, authUrlFields);
  const checked: AuthUrlConfiguration = {
    url: url(config, ['http:', 'https:']),
    timeout: timeout(config, 5),
  };
  const profile = text(config, 'tls_profile', false);
  if (profile !== undefined) checked.tls_profile = profile;
  return checked;
}

function ldapConfiguration(config: Record<string, unknown>): LdapConfiguration {
  unknownFields(config, ldapFields);
  const method = config.authentication_method ?? 'search_dn';
  if (method !== 'search_dn' && method !== 'compose_dn') {
    throw invalid(
      'configuration.authentication_method',
      'must be search_dn or compose_dn (compose_upn is not supported)',
    );
  }
  const scope = config.search_dn_scope ?? 'sub';
  if (scope !== 'sub' && scope !== 'one' && scope !== 'base')
    throw invalid('configuration.search_dn_scope', 'must be sub, one or base');
  const starttls = config.starttls ?? false;
  if (typeof starttls !== 'boolean') throw invalid('configuration.starttls', 'must be true or false');
  const checked: LdapConfiguration = {
    url: url(config, ['ldap:', 'ldaps:']),
    starttls,
    timeout: timeout(config, 5),
    authentication_method: method,
    search_dn_scope: scope,
    search_dn_filter_prefix: text(config, 'search_dn_filter_prefix', false) ?? '(uid=',
    search_dn_filter_suffix: text(config, 'search_dn_filter_suffix', false) ?? ')',
  };
  if (starttls && checked.url.startsWith('ldaps:'))
    throw invalid('configuration.starttls', 'is for ldap:// URLs (ldaps:// is TLS already)');
  for (const field of [
    'tls_profile',
    'admin_dn',
    'admin_password',
    'search_dn_base',
    'bind_prefix',
    'bind_suffix',
  ] as const) {
    const value = text(config, field, false);
    if (value !== undefined) checked[field] = value;
  }
  if ((checked.admin_dn === undefined) !== (checked.admin_password === undefined)) {
    throw invalid(
      'configuration.admin_password',
      'admin_dn and admin_password go together (neither: anonymous search)',
    );
  }
  if (method === 'search_dn' && checked.search_dn_base === undefined) {
    throw invalid('configuration.search_dn_base', 'is required with authentication_method search_dn');
  }
  if (method === 'compose_dn' && checked.bind_suffix === undefined) {
    throw invalid(
      'configuration.bind_suffix',
      'is required with authentication_method compose_dn (e.g. ,ou=people,dc=example,dc=com)',
    );
  }
  return checked;
}

/** The configuration of a registry type, checked; throws `MGMT_VALIDATION` naming the field. */
export function checkConfiguration(type: RegistryType, written: unknown): RegistryConfiguration {
  if (!isRecord(written)) throw invalid('configuration', 'must be an object');
  return type === 'authurl' ? authUrlConfiguration(written) : ldapConfiguration(written);
}

/** Takes API Connect's `endpoint.endpoint` as `configuration.url` when only the former is written. */
function withEndpoint(input: Record<string, unknown>): unknown {
  const configuration = input.configuration ?? {};
  const endpoint = isRecord(input.endpoint) ? input.endpoint.endpoint : undefined;
  if (!isRecord(configuration) || endpoint === undefined || configuration.url !== undefined) return configuration;
  return { ...configuration, url: endpoint };
}

/** A whole registry file or request body, checked. */
export function checkRegistryInput(input: unknown): RegistryInput {
  if (!isRecord(input)) throw invalid('body', 'must be an object');
  const { name, title, registry_type: type } = input;
  if (typeof name !== 'string' || !namePattern.test(name)) {
    throw invalid('name', 'must be 1-63 lower-case letters, digits or dashes, starting with a letter or digit');
  }
  if (title !== undefined && (typeof title !== 'string' || title.length > 200))
    throw invalid('title', 'must be text of at most 200 characters');
  if (type !== 'authurl' && type !== 'ldap') throw invalid('registry_type', 'must be authurl or ldap');
  const configuration = checkConfiguration(type, withEndpoint(input));
  return {
    name,
    title: typeof title === 'string' && title !== '' ? title : name,
    registry_type: type,
    configuration,
  };
}

/** The configuration as the API shows it: the bind password replaced by whether one is stored. */
export function publicConfiguration(configuration: RegistryConfiguration): Record<string, unknown> {
  const { admin_password: password, ...rest } = configuration as LdapConfiguration;
  return password === undefined ? rest : { ...rest, admin_password_set: true };
}
