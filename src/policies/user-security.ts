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
import { userSecurityProblems, userSecurityRegistry } from '../definitions/user-security-support.ts';
import { PorticoError } from '../errors.ts';
import type { ErrorCode } from '../errors.ts';
import { basicHeaderFor, parseBasicHeader } from '../identity/types.ts';
import type { BasicCredentials, UserVerifier } from '../identity/types.ts';
import { declaredPolicy } from './policy-config.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';

export interface UserSecurityConfig {
  title?: string;
  'extract-identity-method'?: 'disabled' | 'basic' | 'context-var';
  'ei-stop-on-error'?: boolean;
  'user-context-var'?: string;
  'pass-context-var'?: string;
  'user-auth-method'?: 'disabled' | 'user-registry';
  'au-stop-on-error'?: boolean;
  'user-registry'?: string;
  'user-az-method'?: 'disabled' | 'authenticated';
  'az-stop-on-error'?: boolean;
}

type Extract = (ctx: FlowContext) => BasicCredentials | undefined;

/** An assembly error whose message and status come from the error catalogue. */
function refusal(errorName: string, code: ErrorCode, title: string, headers: Record<string, string> = {}): AssemblyError {
  const error = new PorticoError(code);
  return new AssemblyError(errorName, error.message, { status: error.status, policy: title, headers });
}

function extractor(config: UserSecurityConfig): Extract | undefined {
  const method = config['extract-identity-method'] ?? 'basic';
  if (method === 'disabled') return undefined;
  if (method === 'basic') return (ctx) => parseBasicHeader(ctx.get('request.headers.authorization') as string | undefined);
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
  const name = userSecurityRegistry(config as Record<string, unknown>);
  if (name === undefined) return undefined;
  const found = api.userRegistries?.get(name);
  if (found === undefined) {
    throw new PolicyCompileError(`${path}.user-registry`, 'unknown-user-registry', `user registry ${name} is not enabled in catalog ${api.catalog.name}`);
  }
  if ('refused' in found) throw new PolicyCompileError(`${path}.user-registry`, 'unusable-user-registry', found.refused);
  return found;
}

/** Compiles a user-security policy: the phases are chosen here, the step only runs them. */
export function compileUserSecurity(config: UserSecurityConfig, api: CompiledApiInfo, path: string): Step {
  const problem = userSecurityProblems(config as Record<string, unknown>)[0];
  if (problem !== undefined) throw new PolicyCompileError(`${path}.${problem.field}`, problem.rule, problem.reason);
  const title = config.title ?? 'user-security';
  const extract = extractor(config);
  const verifier = verifierFor(config, api, path);
  const authorize = (config['user-az-method'] ?? 'authenticated') === 'authenticated';
  const stop = {
    extract: config['ei-stop-on-error'] ?? true,
    authenticate: config['au-stop-on-error'] ?? true,
    authorize: config['az-stop-on-error'] ?? true,
  };
  // RFC 7617 §2: a challenge only where the caller could answer it with a Basic header.
  const basic = (config['extract-identity-method'] ?? 'basic') === 'basic';
  const challenge: Record<string, string> = basic ? { 'WWW-Authenticate': `Basic realm="${verifier?.registry ?? 'portico'}"` } : {};
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

export const userSecurityPolicy: PolicyType<UserSecurityConfig> = {
  name: 'user-security',
  ...declaredPolicy('user-security'),
  compile: compileUserSecurity,
};
