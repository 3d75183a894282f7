/**
 * The gateway's security phase. At snapshot time each operation's requirements compile into
 * scheme enforcers (OR of alternatives, AND inside one; see definitions/security-support.ts);
 * an operation whose security cannot be enforced compiles into a refusal, never into "open".
 * Per request, {@link authenticate} runs right after routing, before parameters are read, and
 * returns the caller or throws a coded PorticoError.
 */
import {
  apiSecurityRefusal,
  declaredSchemes,
  effectiveSecurity,
  securityPlan,
} from '../../definitions/security-support.ts';
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { PorticoError } from '../../errors.ts';
import { dispatcherFor } from '../../policies/invoke.ts';
import type { PolicySettings } from '../../policies/types.ts';
import { clientIdScheme } from './client-id.ts';
import { clientSecretScheme } from './client-secret.ts';
import { Introspector } from './introspection.ts';
import type { IntrospectionSettings } from './introspection.ts';
import { oauth2IntrospectScheme } from './oauth2.ts';
import type { Caller, CallerDirectory, Proof, SchemeEnforcer, SchemeFailure, SecurityRequest } from './types.ts';

export type { Caller, CallerDirectory, SecurityRequest } from './types.ts';
export type { IntrospectionSettings } from './introspection.ts';

/** One operation's compiled security. */
export type OperationSecurity =
  | { refused: false; open: boolean; alternatives: readonly SchemeEnforcer[][]; asynchronous: boolean }
  | { refused: true; reason: string };

/** What compiling a scheme may need besides the document: the API's properties and the gateway settings. */
export interface SecurityCompileOptions {
  /** API properties for the catalog (`x-introspect-basic-authorization-header`). */
  properties: Readonly<Record<string, string>>;
  settings: PolicySettings;
}

// One introspection client (and cache) per API document and endpoint, shared by its operations.
const introspectors = new WeakMap<object, Map<string, Introspector>>();

// An API property in API Connect: the Authorization header the gateway sends to the endpoint.
const introspectAuthorization = 'x-introspect-basic-authorization-header';

const defaultIntrospection: IntrospectionSettings = { timeoutMs: 5000, cacheMs: 60_000, cacheEntries: 10_000 };

function enforcerFor(
  scheme: SupportedScheme,
  document: Record<string, unknown>,
  options: SecurityCompileOptions | undefined,
): SchemeEnforcer | string {
  if (scheme.role === 'client-id') return clientIdScheme(scheme);
  if (scheme.role === 'client-secret') return clientSecretScheme(scheme);
  const introspect = scheme.introspect!;
  const settings = options?.settings;
  if (introspect.tlsProfile !== undefined && settings?.tlsProfiles[introspect.tlsProfile] === undefined) {
    return `security scheme ${scheme.scheme}: TLS profile ${introspect.tlsProfile} is not configured (PORTICO_TLS_PROFILES)`;
  }
  let byEndpoint = introspectors.get(document);
  if (byEndpoint === undefined) introspectors.set(document, (byEndpoint = new Map()));
  const authorization = options?.properties[introspectAuthorization];
  const key = `${introspect.url} ${introspect.tlsProfile ?? ''} ${authorization ?? ''}`;
  let introspector = byEndpoint.get(key);
  if (introspector === undefined) {
    introspector = new Introspector({
      url: introspect.url,
      authorization: authorization === '' ? undefined : authorization,
      dispatcher: dispatcherFor(introspect.tlsProfile, settings ?? ({ tlsProfiles: {} } as unknown as PolicySettings)),
      settings: settings?.introspection ?? defaultIntrospection,
    });
    byEndpoint.set(key, introspector);
  }
  return oauth2IntrospectScheme(scheme, introspector);
}

/** Compiles the security in force for one operation of an API document (as stored, maybe never validated). */
export function compileOperationSecurity(
  document: Record<string, unknown>,
  operation: Record<string, unknown>,
  options?: SecurityCompileOptions,
): OperationSecurity {
  const apiWide = apiSecurityRefusal(document);
  if (apiWide) return { refused: true, reason: apiWide.reason };
  const plan = securityPlan(effectiveSecurity(document, operation), declaredSchemes(document));
  if (Array.isArray(plan)) return { refused: true, reason: plan.map((refusal) => refusal.reason).join('; ') };
  const alternatives: SchemeEnforcer[][] = [];
  for (const schemes of plan.alternatives) {
    const alternative: SchemeEnforcer[] = [];
    for (const scheme of schemes) {
      const enforcer = enforcerFor(scheme, document, options);
      if (typeof enforcer === 'string') return { refused: true, reason: enforcer };
      alternative.push(enforcer);
    }
    alternatives.push(alternative);
  }
  const asynchronous = alternatives.some((alternative) => alternative.some((scheme) => scheme.asynchronous === true));
  return { refused: false, open: plan.open, alternatives, asynchronous };
}

const anonymous: Caller = Object.freeze({});

/**
 * Who calls this operation. Without a verified secret (or token), an unknown client id, an
 * unsubscribed one and one whose subscription awaits approval get the same 401, so the answer
 * does not tell a valid client id from an invalid one. Only an operation with a scheme that asks
 * another server (introspection) answers with a promise.
 * @throws PorticoError `GW_UNAUTHORIZED`, `GW_INVALID_TOKEN` (401), `GW_NOT_SUBSCRIBED` (secret verified),
 *   `GW_INSUFFICIENT_SCOPE` (403), `GW_INTROSPECTION_UNAVAILABLE` (503) or `GW_SECURITY_UNSUPPORTED`;
 *   `params.clientId` holds the client id presented, for the activity log, and `params.challenge`
 *   the `WWW-Authenticate` value a bearer scheme asks for (RFC 6750 §3).
 */
export function authenticate(
  security: OperationSecurity,
  request: SecurityRequest,
  directory: CallerDirectory,
): Caller | Promise<Caller> {
  if (security.refused) throw new PorticoError('GW_SECURITY_UNSUPPORTED', { reason: security.reason });
  if (security.asynchronous) return authenticateAsync(security, request, directory);
  const tally = new Tally();
  for (const alternative of security.alternatives) {
    const proof: Proof = { secretVerified: false };
    const failures = alternative.map((scheme) => scheme.check(request, proof, directory) as SchemeFailure | undefined);
    const outcome = conclude(alternative, failures, proof, directory);
    if (tally.add(outcome, proof)) return outcome as Caller;
  }
  return tally.verdict(security);
}

async function authenticateAsync(
  security: OperationSecurity & { refused: false },
  request: SecurityRequest,
  directory: CallerDirectory,
): Promise<Caller> {
  const tally = new Tally();
  for (const alternative of security.alternatives) {
    const proof: Proof = { secretVerified: false };
    const failures: Array<SchemeFailure | undefined> = [];
    // In order: a later scheme reads what an earlier one proved (the client id before the token).
    for (const scheme of alternative) failures.push(await scheme.check(request, proof, directory));
    const outcome = conclude(alternative, failures, proof, directory);
    if (tally.add(outcome, proof)) return outcome as Caller;
  }
  return tally.verdict(security);
}

type Outcome = Caller | Exclude<SchemeFailure, 'missing'> | 'failed' | 'not-subscribed' | 'pending';

/** One alternative: every scheme must hold (all run, so a failure early costs what one late does). */
function conclude(
  alternative: readonly SchemeEnforcer[],
  failures: ReadonlyArray<SchemeFailure | undefined>,
  proof: Proof,
  directory: CallerDirectory,
): Outcome {
  const bearerFailure = failures.find((failure, index) => failure !== undefined && alternative[index].bearer === true);
  const otherFailed = failures.some((failure, index) => failure !== undefined && alternative[index].bearer !== true);
  if (bearerFailure !== undefined && bearerFailure !== 'missing') {
    // A bearer verdict matters only when everything else of the alternative held.
    if (!otherFailed || bearerFailure === 'unavailable') return bearerFailure;
  }
  const credential = proof.credential;
  if (otherFailed || bearerFailure !== undefined || credential === undefined) return 'failed';
  const subscription = directory.subscriptionFor(credential.app.id);
  if (subscription !== undefined && subscription.state === 'active') {
    const caller: Caller = { clientId: proof.clientId, credential, subscription };
    if (proof.scopes !== undefined) Object.assign(caller, { scopes: proof.scopes, claims: proof.claims });
    return caller;
  }
  // Only a caller who proved ownership of the client id learns why it is refused.
  if (!proof.secretVerified) return 'failed';
  return subscription === undefined ? 'not-subscribed' : 'pending';
}

/** The failures of every alternative, and the one answer they make. */
class Tally {
  private presented: string | undefined;
  private unsubscribed: PorticoError | undefined;
  private missingScopes: readonly string[] | undefined;
  private unavailable = false;
  private tokenRejected = false;

  /** Records one alternative's outcome; true when it is a caller. */
  add(outcome: Outcome, proof: Proof): boolean {
    this.presented ??= proof.clientId;
    if (typeof outcome !== 'string') return true;
    if (outcome === 'not-subscribed' || outcome === 'pending') {
      const reason = outcome === 'pending' ? 'the subscription is pending approval' : 'no subscription';
      this.unsubscribed ??= new PorticoError('GW_NOT_SUBSCRIBED', { clientId: proof.clientId, reason });
    }
    if (outcome === 'forbidden') this.missingScopes ??= proof.missingScopes;
    if (outcome === 'unavailable') this.unavailable = true;
    if (outcome === 'rejected') this.tokenRejected = true;
    return false;
  }

  verdict(security: OperationSecurity & { refused: false }): Caller {
    if (security.open) return anonymous;
    if (this.missingScopes !== undefined) {
      const scope = this.missingScopes.join(' ');
      const challenge = `Bearer error="insufficient_scope", scope="${scope}"`;
      throw new PorticoError('GW_INSUFFICIENT_SCOPE', { clientId: this.presented, scope, challenge });
    }
    if (this.unsubscribed !== undefined) throw this.unsubscribed;
    if (this.unavailable) throw new PorticoError('GW_INTROSPECTION_UNAVAILABLE', { clientId: this.presented });
    if (this.tokenRejected) {
      throw new PorticoError('GW_INVALID_TOKEN', { clientId: this.presented, challenge: 'Bearer error="invalid_token"' });
    }
    // RFC 6750 §3.1: a request without a token gets the challenge without an error code.
    const bearerAsked = security.alternatives.some((alternative) => alternative.some((scheme) => scheme.bearer === true));
    const challenge = bearerAsked ? 'Bearer' : undefined;
    throw new PorticoError('GW_UNAUTHORIZED', { clientId: this.presented, challenge });
  }
}

/**
 * Header and query names any of the API's security schemes names (client ids and secrets, as
 * written: supported or not), lower-cased, for activity-log redaction; computed once per API.
 */
export function credentialNames(document: Record<string, unknown>): { headers: Set<string>; query: Set<string> } {
  const names = { headers: new Set<string>(), query: new Set<string>() };
  for (const scheme of Object.values(declaredSchemes(document))) {
    if (typeof scheme !== 'object' || scheme === null) continue;
    const { name, in: where } = scheme as { name?: unknown; in?: unknown };
    if (typeof name !== 'string') continue;
    if (where === 'query') names.query.add(name);
    else if (where === 'header') names.headers.add(name.toLowerCase());
  }
  return names;
}
