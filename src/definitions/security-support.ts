/**
 * What of an API's security the gateway can enforce, judged from the document as written.
 * Import (a definition error) and the gateway's snapshot (an operation refused, never served
 * open) ask this one module, so the two cannot disagree. OpenAPI's semantics exactly
 * (OpenAPI 3.1 §4.8.30, Swagger 2.0 "Security Requirement Object"): a requirement list is an
 * OR of requirement objects, the schemes inside one are AND, `{}` means anonymous access is
 * allowed, and an operation's `security` (even `[]`) replaces the document's.
 */
import { resolveLocal } from './api-operations.ts';
import type { RawOperation } from './api-operations.ts';
import { isRecord } from './json-path.ts';
import type { PathSegment } from './json-path.ts';

/** A scheme the gateway enforces: where its credential is read and what it proves. */
export interface SupportedScheme {
  /** The scheme's name in `securityDefinitions` / `components.securitySchemes`. */
  scheme: string;
  role: 'client-id' | 'client-secret' | 'basic' | 'oauth2-introspect' | 'oauth2-native';
  in: 'header' | 'query';
  /** The header or query parameter name as written, e.g. `X-IBM-Client-Id` (`Authorization` for basic and bearer). */
  name: string;
  /** Basic: the user registry that checks the user name and password. */
  registry?: string;
  /** oauth2: the third-party provider's RFC 7662 endpoint (API Connect's `x-tokenIntrospect`). */
  introspect?: { url: string; tlsProfile?: string };
  /** oauth2: the native provider whose tokens are accepted (API Connect's `x-ibm-oauth-provider`). */
  provider?: string;
  /** oauth2: the scopes the requirement asks for (every one must be granted). */
  scopes?: readonly string[];
}

/** One operation's security: `open` when anonymous callers are allowed (`[]`, or a `{}` alternative). */
export interface SecurityPlan {
  open: boolean;
  /** The non-empty alternatives, each the schemes that must all hold (client id before secret). */
  alternatives: SupportedScheme[][];
}

/** Why a requirement (or the API) cannot be enforced; `at` is relative to the list examined. */
export interface SecurityRefusal {
  at: PathSegment[];
  rule: 'unsupported-security' | 'security-requirement' | 'unknown-security-scheme' | 'type';
  reason: string;
}

// IBM "Creating an API key security definition": the key's name, or API Connect v10's
// `x-key-type`, says whether it carries the client id or the client secret.
const clientIdNames = new Set(['x-ibm-client-id', 'client_id', 'client-id']);
const clientSecretNames = new Set(['x-ibm-client-secret', 'client_secret', 'client-secret']);
const keyTypes: Record<string, 'client-id' | 'client-secret'> = {
  client_id: 'client-id',
  client_secret: 'client-secret',
};

const notYet =
  'is not supported yet: the gateway enforces client ids and client secrets (apiKey), basic authentication ' +
  'against a user registry, and oauth2 with x-tokenIntrospect or x-ibm-oauth-provider';

/** The security schemes a document declares, `$ref`s followed, as written. */
export function declaredSchemes(document: Record<string, unknown>): Record<string, unknown> {
  const components = isRecord(document.components) ? document.components.securitySchemes : undefined;
  const written = document.swagger !== undefined ? document.securityDefinitions : components;
  if (!isRecord(written)) return {};
  const schemes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(written)) schemes[name] = resolveLocal(document, value);
  return schemes;
}

/** The role an apiKey scheme plays, or why the gateway cannot enforce the scheme. */
export function schemeSupport(name: string, scheme: unknown): SupportedScheme | string {
  if (!isRecord(scheme)) return `security scheme ${name} is not an object`;
  const type = scheme.type;
  if (type === 'basic' || (type === 'http' && String(scheme.scheme).toLowerCase() === 'basic'))
    return basicSupport(name, scheme);
  if (type === 'oauth2' && scheme['x-tokenIntrospect'] !== undefined) return introspectedOAuth(name, scheme);
  if (type === 'oauth2' && scheme['x-ibm-oauth-provider'] !== undefined) return nativeOAuth(name, scheme);
  if (type === 'oauth2' || type === 'openIdConnect' || type === 'mutualTLS') {
    return `security scheme ${name}: ${type} ${notYet}`;
  }
  if (type === 'http') return `security scheme ${name}: http ${String(scheme.scheme)} authentication ${notYet}`;
  if (type !== 'apiKey') return `security scheme ${name}: type ${String(type)} is not a type the gateway knows`;
  if (scheme.in !== 'header' && scheme.in !== 'query') {
    return `security scheme ${name}: an apiKey in ${String(scheme.in)} ${notYet} in a header or the query`;
  }
  if (typeof scheme.name !== 'string' || scheme.name === '') return `security scheme ${name}: an apiKey needs a name`;
  const role = apiKeyRole(scheme);
  if (typeof role !== 'string') return `security scheme ${name}: ${role.reason}`;
  return { scheme: name, role, in: scheme.in, name: scheme.name };
}

/**
 * A basic scheme names the user registry that checks its callers with
 * `x-ibm-authentication-registry` (API Connect's field on a basic security definition). Whether
 * the registry exists and is enabled in the catalog is judged at publish and in the snapshot.
 */
function basicSupport(name: string, scheme: Record<string, unknown>): SupportedScheme | string {
  const registry = scheme['x-ibm-authentication-registry'];
  if (scheme['x-ibm-authentication-url'] !== undefined) {
    return (
      `security scheme ${name}: x-ibm-authentication-url ${notYet} inline; create an authurl user registry ` +
      'and name it with x-ibm-authentication-registry'
    );
  }
  if (typeof registry !== 'string' || registry === '') {
    return `security scheme ${name}: basic authentication needs x-ibm-authentication-registry naming a user registry`;
  }
  return { scheme: name, role: 'basic', in: 'header', name: 'Authorization', registry };
}

// IBM "Integrating third party OAuth provider": `x-tokenIntrospect: {url, tls-profile}` on an
// oauth2 definition; the bearer token is sent to the URL as RFC 7662 says.
function introspectedOAuth(name: string, scheme: Record<string, unknown>): SupportedScheme | string {
  const introspect = scheme['x-tokenIntrospect'];
  if (!isRecord(introspect)) return `security scheme ${name}: x-tokenIntrospect must be an object with a url`;
  const unknown = Object.keys(introspect).filter((key) => key !== 'url' && key !== 'tls-profile');
  if (unknown.length > 0)
    return `security scheme ${name}: x-tokenIntrospect has unknown fields (${unknown.join(', ')})`;
  const { url, 'tls-profile': tlsProfile } = introspect;
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/i.test(url)) {
    return `security scheme ${name}: x-tokenIntrospect.url must be an http(s) URL`;
  }
  if (tlsProfile !== undefined && (typeof tlsProfile !== 'string' || tlsProfile === '')) {
    return `security scheme ${name}: x-tokenIntrospect.tls-profile must name a TLS profile`;
  }
  const found: SupportedScheme = {
    scheme: name,
    role: 'oauth2-introspect',
    in: 'header',
    name: 'Authorization',
  };
  found.introspect = tlsProfile === undefined ? { url } : { url, tlsProfile };
  return found;
}

// IBM "Creating an OAuth security definition": the definition names an OAuth provider the
// catalog enables (`x-ibm-oauth-provider`); its tokens are checked by the gateway itself.
function nativeOAuth(name: string, scheme: Record<string, unknown>): SupportedScheme | string {
  const provider = scheme['x-ibm-oauth-provider'];
  if (typeof provider !== 'string' || provider === '') {
    return `security scheme ${name}: x-ibm-oauth-provider must name an OAuth provider`;
  }
  return { scheme: name, role: 'oauth2-native', in: 'header', name: 'Authorization', provider };
}

function apiKeyRole(scheme: Record<string, unknown>): 'client-id' | 'client-secret' | { reason: string } {
  const keyType = scheme['x-key-type'];
  if (keyType !== undefined) {
    // Own entries only: `x-key-type: constructor` must not find Object.prototype's members.
    return Object.hasOwn(keyTypes, String(keyType))
      ? keyTypes[String(keyType)]
      : { reason: `x-key-type ${String(keyType)} is not client_id or client_secret` };
  }
  const name = String(scheme.name).toLowerCase();
  if (clientIdNames.has(name)) return 'client-id';
  if (clientSecretNames.has(name)) return 'client-secret';
  return {
    reason:
      `apiKey ${String(scheme.name)} carries neither a client id nor a client secret: name it ` +
      'X-IBM-Client-Id, client_id or client-id (X-IBM-Client-Secret, client_secret or client-secret ' +
      'for the secret), or say which with x-key-type',
  };
}

/**
 * The plan for one requirement list (`undefined` = none written: open), or every reason it
 * cannot be enforced. Any scheme the gateway cannot enforce refuses the whole list, even next
 * to an alternative it could: the provider meant both.
 */
export function securityPlan(list: unknown, schemes: Record<string, unknown>): SecurityPlan | SecurityRefusal[] {
  if (list === undefined) return { open: true, alternatives: [] };
  if (!Array.isArray(list)) return [{ at: [], rule: 'type', reason: 'security is a list of requirement objects' }];
  const refusals: SecurityRefusal[] = [];
  const plan: SecurityPlan = { open: list.length === 0, alternatives: [] };
  list.forEach((requirement: unknown, index) => {
    const alternative = requirementSchemes(requirement, schemes, index, refusals);
    if (alternative === undefined) return;
    if (alternative.length === 0) plan.open = true;
    else plan.alternatives.push(alternative);
  });
  return refusals.length > 0 ? refusals : plan;
}

function requirementSchemes(
  requirement: unknown,
  schemes: Record<string, unknown>,
  index: number,
  refusals: SecurityRefusal[],
): SupportedScheme[] | undefined {
  if (!isRecord(requirement)) {
    refusals.push({
      at: [index],
      rule: 'type',
      reason: 'a security requirement is an object of scheme names',
    });
    return undefined;
  }
  const found: SupportedScheme[] = [];
  const before = refusals.length;
  for (const [name, scopes] of Object.entries(requirement)) {
    const at = [index, name];
    if (!(name in schemes)) {
      refusals.push({
        at,
        rule: 'unknown-security-scheme',
        reason: `security scheme ${name} is not declared`,
      });
      continue;
    }
    const support = schemeSupport(name, schemes[name]);
    if (typeof support === 'string') refusals.push({ at, rule: 'unsupported-security', reason: support });
    else {
      const withScopes = requiredScopes(support, scopes);
      if (typeof withScopes === 'string') refusals.push({ at, rule: 'unsupported-security', reason: withScopes });
      else found.push(withScopes);
    }
  }
  if (refusals.length > before) return undefined;
  const problem = combinationProblem(found);
  if (problem !== undefined) {
    refusals.push({ at: [index], rule: 'security-requirement', reason: problem });
    return undefined;
  }
  // The client id first: the secret is checked against the credential the id names, and a
  // token's client_id against the client id presented; a registry or an introspection endpoint
  // is only asked for a caller whose client id and secret already hold.
  return found.sort((a, b) => roleOrder[a.role] - roleOrder[b.role]);
}

const roleOrder: Record<SupportedScheme['role'], number> = {
  'client-id': 0,
  'client-secret': 1,
  basic: 2,
  'oauth2-introspect': 3,
  'oauth2-native': 3,
};

/** The scheme with the requirement's scopes: only an oauth2 requirement has any. */
function requiredScopes(scheme: SupportedScheme, scopes: unknown): SupportedScheme | string {
  const list = Array.isArray(scopes) ? scopes : undefined;
  if (scheme.role !== 'oauth2-introspect' && scheme.role !== 'oauth2-native') {
    if (list === undefined || list.length > 0)
      return `security scheme ${scheme.scheme}: an apiKey or basic requirement has no scopes or roles ([])`;
    return scheme;
  }
  if (
    list === undefined ||
    !list.every((scope) => typeof scope === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
  ) {
    // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
    return `security scheme ${scheme.scheme}: the required scopes must be a list of scope tokens (RFC 6749 §3.3)`;
  }
  return { ...scheme, scopes: list as string[] };
}

/** The native OAuth providers an API's oauth2 schemes name, for the publish-time check. */
export function namedProviders(document: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const [name, scheme] of Object.entries(declaredSchemes(document))) {
    const support = schemeSupport(name, scheme);
    if (typeof support !== 'string' && support.provider !== undefined) names.add(support.provider);
  }
  return [...names];
}

/** The user registries an API's basic schemes name, for the publish-time check. */
export function namedRegistries(document: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const [name, scheme] of Object.entries(declaredSchemes(document))) {
    const support = schemeSupport(name, scheme);
    if (typeof support !== 'string' && support.registry !== undefined) names.add(support.registry);
  }
  return [...names];
}

// IBM "Applying security definitions to an API": at most one client id and one client secret,
// and a client secret only together with a client id.
function combinationProblem(schemes: SupportedScheme[]): string | undefined {
  const ids = schemes.filter((s) => s.role === 'client-id').map((s) => s.scheme);
  const secrets = schemes.filter((s) => s.role === 'client-secret').map((s) => s.scheme);
  const tokens = schemes
    .filter((s) => s.role === 'oauth2-introspect' || s.role === 'oauth2-native')
    .map((s) => s.scheme);
  if (ids.length > 1) return `one requirement names two client ids (${ids.join(', ')}); make them alternatives`;
  if (tokens.length > 1)
    return `one requirement names two OAuth schemes (${tokens.join(', ')}); one bearer token cannot be both`;
  if (secrets.length > 1) return `one requirement names two client secrets (${secrets.join(', ')})`;
  if (secrets.length === 1 && ids.length === 0) return `client secret ${secrets[0]} needs a client id beside it`;
  const basics = schemes.filter((s) => s.role === 'basic').map((s) => s.scheme);
  if (basics.length > 1) return `one requirement names two basic schemes (${basics.join(', ')})`;
  if (basics.length > 0 && tokens.length > 0) {
    return `one requirement names basic ${basics[0]} and OAuth ${tokens[0]}: both read the Authorization header`;
  }
  return undefined;
}

/** The requirement list in force for an operation: its own `security` when written, else the document's. */
export function effectiveSecurity(document: Record<string, unknown>, operation: Record<string, unknown>): unknown {
  return 'security' in operation ? operation.security : document.security;
}

/**
 * API-wide options the gateway cannot enforce: `application-authentication.certificate: true`
 * asks API Connect for a client certificate (mutual TLS), which Portico does not check.
 */
export function apiSecurityRefusal(document: Record<string, unknown>): SecurityRefusal | undefined {
  const ibm = document['x-ibm-configuration'];
  const appAuth = isRecord(ibm) ? ibm['application-authentication'] : undefined;
  if (!isRecord(appAuth) || appAuth.certificate !== true) return undefined;
  return {
    at: ['x-ibm-configuration', 'application-authentication', 'certificate'],
    rule: 'unsupported-security',
    reason: `application-authentication with a client certificate ${notYet}`,
  };
}

/** Every place security is written in the document: the document's list, then each operation's. */
export function securityLists(
  document: Record<string, unknown>,
  operations: readonly RawOperation[],
): Array<{ list: unknown; at: string }> {
  const lists: Array<{ list: unknown; at: string }> = [];
  if ('security' in document) lists.push({ list: document.security, at: '$.security' });
  for (const operation of operations) {
    const written = operation.operation;
    if ('security' in written) lists.push({ list: written.security, at: `${operation.at}.security` });
  }
  return lists;
}
