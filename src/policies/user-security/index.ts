/**
 * The `user-security` policy (IBM "user-security", DataPower API Gateway 2.0.0): identity
 * extraction (the `Authorization: Basic` header, RFC 7617, or two context variables), then
 * authentication by a user registry the catalog enables (the same compiled verifiers and
 * bounded answer cache as the basic security scheme), then authorization (`authenticated`).
 * The authenticated name goes to `request.authenticated-credential`, where the basic scheme
 * puts it, so the activity log and later policies read one place.
 *
 * Failures: no identity or refused credentials raise `UnauthorizedError` (401, with
 * `WWW-Authenticate` for basic extraction); an unauthorized user raises `ForbiddenError` (403);
 * a registry that cannot answer raises a 503 whatever the stop flags say (fail closed). A phase
 * whose `*-stop-on-error` is false lets the flow go on without an authenticated user.
 */
import { bool, int, oneOfStrings, policy, str } from '../schema-kit.ts';
import type { JSONSchema } from '../types.ts';
import { userSecurityProblems, userSecurityRegistry } from './rules.ts';
import { PorticoError } from '../../errors.ts';
import type { ErrorCode } from '../../errors.ts';
import { basicHeaderFor, parseBasicHeader } from '../../identity/types.ts';
import type { BasicCredentials, UserVerifier } from '../../identity/types.ts';
import { definePolicy } from '../policy.ts';
import { AssemblyError, PolicyCompileError } from '../types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from '../types.ts';

export interface UserSecurityConfig {
  title?: string;
  // Defaulted by the schema; the check (rules.ts) has refused the variants Portico does not run.
  'extract-identity-method': 'disabled' | 'basic' | 'context-var';
  'ei-stop-on-error': boolean;
  'user-context-var'?: string;
  'pass-context-var'?: string;
  'user-auth-method': 'disabled' | 'user-registry';
  'au-stop-on-error': boolean;
  'user-registry'?: string;
  'user-az-method': 'disabled' | 'authenticated';
  'az-stop-on-error': boolean;
  /** The fields listed for exported documents that Portico does not act on. */
  [field: string]: unknown;
}

type Extract = (ctx: FlowContext) => BasicCredentials | undefined;

/** An assembly error whose message and status come from the error catalogue. */
function refusal(
  errorName: string,
  code: ErrorCode,
  title: string,
  headers: Record<string, string> = {},
): AssemblyError {
  const error = new PorticoError(code);
  return new AssemblyError(errorName, error.message, { status: error.status, policy: title, headers });
}

function extractor(config: UserSecurityConfig): Extract | undefined {
  const method = config['extract-identity-method'];
  if (method === 'disabled') return undefined;
  if (method === 'basic')
    return (ctx) => parseBasicHeader(ctx.get('request.headers.authorization') as string | undefined);
  const userVar = config['user-context-var']!;
  const passVar = config['pass-context-var']!;
  return (ctx) => {
    const username = ctx.get(userVar);
    const password = ctx.get(passVar);
    if (typeof username !== 'string' || username === '' || typeof password !== 'string') return undefined;
    return { username, password, header: basicHeaderFor(username, password) };
  };
}

function verifierFor(config: UserSecurityConfig, api: CompiledApiInfo, path: string): UserVerifier | undefined {
  const name = userSecurityRegistry(config);
  if (name === undefined) return undefined;
  const found = api.userRegistries?.get(name);
  if (found === undefined) {
    throw new PolicyCompileError(
      `${path}.user-registry`,
      'unknown-user-registry',
      `user registry ${name} is not enabled in catalog ${api.catalog.name}`,
    );
  }
  if ('refused' in found)
    throw new PolicyCompileError(`${path}.user-registry`, 'unusable-user-registry', found.refused);
  return found;
}

/** Compiles a user-security policy: the phases are chosen here, the step only runs them. */
function compileUserSecurity(config: UserSecurityConfig, api: CompiledApiInfo, path: string): Step {
  const title = config.title ?? 'user-security';
  const extract = extractor(config);
  const verifier = verifierFor(config, api, path);
  const authorize = config['user-az-method'] === 'authenticated';
  const stop = {
    extract: config['ei-stop-on-error'],
    authenticate: config['au-stop-on-error'],
    authorize: config['az-stop-on-error'],
  };
  // RFC 7617 §2: a challenge only where the caller could answer it with a Basic header.
  const basic = config['extract-identity-method'] === 'basic';
  const challenge: Record<string, string> = basic
    ? { 'WWW-Authenticate': `Basic realm="${verifier?.registry ?? 'portico'}"` }
    : {};
  const unauthorized = () => refusal('UnauthorizedError', 'GW_USER_UNAUTHORIZED', title, challenge);

  return async function userSecurity(ctx: FlowContext) {
    const credentials = extract?.(ctx);
    if (extract !== undefined && credentials === undefined && stop.extract) throw unauthorized();
    if (verifier !== undefined) {
      const verdict = credentials === undefined ? { outcome: 'refused' as const } : await verifier.verify(credentials);
      if (verdict.outcome === 'unavailable') throw refusal('ConnectionError', 'GW_REGISTRY_UNAVAILABLE', title);
      if (verdict.outcome === 'authenticated') ctx.request['authenticated-credential'] = verdict.user;
      else if (stop.authenticate) throw unauthorized();
    }
    if (authorize && ctx.request['authenticated-credential'] === undefined && stop.authorize) {
      throw refusal('ForbiddenError', 'GW_USER_FORBIDDEN', title);
    }
  };
}

// IBM "user-security" (DataPower API Gateway 2.0.0). The form and redirect variants are listed so
// exported documents validate; the policy's check refuses them (rules.ts).
const userSecurityFields: Record<string, JSONSchema> = {
  'factor-id': str('Identifies the results of this factor in the API context; Portico runs one factor.', 'default'),
  'extract-identity-method': oneOfStrings(
    ['disabled', 'basic', 'context-var', 'html-form', 'redirect'],
    'Where the user name and password come from: the Authorization: Basic header, or two context variables.',
    'basic',
  ),
  'ei-stop-on-error': bool('Stop with UnauthorizedError when no identity can be extracted.', true),
  'user-context-var': str('Context variable holding the user name (context-var).'),
  'pass-context-var': str('Context variable holding the password (context-var).'),
  'ei-default-form': bool('Use the default login form (html-form; not supported).', true),
  'ei-custom-form': str('Location of a custom login form (html-form; not supported).'),
  'ei-custom-form-tls-client-profile': str('TLS profile to fetch the custom form (html-form; not supported).'),
  'ei-custom-form-content-security-policy': str('Content-Security-Policy of the custom form (not supported).'),
  'ei-form-time-limit': int('Seconds allowed to submit the form (html-form; not supported).', 300),
  'redirect-url': str('URL fragment to redirect to for credentials (redirect; not supported).'),
  'redirect-time-limit': int('Seconds allowed to complete the redirect (redirect; not supported).', 300),
  'user-auth-method': oneOfStrings(
    ['disabled', 'user-registry', 'auth-url', 'ldap'],
    'How the extracted credentials are authenticated: by a user registry the catalog enables.',
    'user-registry',
  ),
  'au-stop-on-error': bool('Stop with UnauthorizedError when the registry refuses the credentials.', true),
  'user-registry': str('Name of the user registry (authurl or LDAP) that authenticates (user-registry).'),
  'auth-url': str('Inline authentication URL (auth-url; not supported: create an authurl user registry).'),
  'auth-tls-client-profile': str('TLS profile for the inline authentication URL (not supported).'),
  'auth-response-headers-pattern': str('Response headers of the authentication URL to keep (not supported).'),
  'auth-response-header-credential': str('Response header naming the authenticated user (not supported).'),
  'user-az-method': oneOfStrings(
    ['disabled', 'authenticated', 'html-form'],
    'authenticated: every user an earlier step authenticated is authorized.',
    'authenticated',
  ),
  'az-stop-on-error': bool('Stop with ForbiddenError when the user is not authorized.', true),
  'az-default-form': bool('Use the default authorization form (html-form; not supported).', true),
  'az-custom-form': str('Location of a custom authorization form (html-form; not supported).'),
  'az-custom-form-tls-client-profile': str('TLS profile to fetch the custom form (not supported).'),
  'az-custom-form-content-security-policy': str('Content-Security-Policy of the custom form (not supported).'),
  'az-form-time-limit': int('Seconds allowed to submit the authorization form (not supported).', 300),
  'az-table-display-format': str('Scope table format of the authorization form (not supported).'),
  'az-table-dynamic-entries': str('Context variable with dynamic scope entries (not supported).'),
  'az-table-default-entry': str('Default scope entry of the authorization form (not supported).'),
};

export const userSecurityPolicy: PolicyType = definePolicy<UserSecurityConfig>({
  name: 'user-security',
  versions: ['2.0.0'],
  description:
    "Extracts a user's credentials, authenticates them against a user registry the catalog enables and " +
    'authorizes the user (UnauthorizedError 401, ForbiddenError 403, 503 when the registry cannot answer).',
  schema: policy(['2.0.0'], userSecurityFields),
  check: (config, _scope, path) =>
    userSecurityProblems(config).map((problem) => ({
      path: `${path}.${problem.field}`,
      rule: problem.rule,
      reason: problem.reason,
    })),
  compile: compileUserSecurity,
});
