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
import type { CatalogRegistries } from '../../identity/verifiers.ts';
import { dispatcherFor, tlsProfilesOf } from '../../policies/invoke/dispatchers.ts';
import type { PolicySettings } from '../../policies/types.ts';
import { basicScheme } from './basic.ts';
import { clientIdScheme } from './client-id.ts';
import { clientSecretScheme } from './client-secret.ts';
import { Introspector } from './introspection.ts';
import type { IntrospectionSettings } from './introspection.ts';
import { oauth2IntrospectScheme } from './oauth2.ts';
import { nativeOAuthScheme } from './native-oauth.ts';
import type { CompiledProvider } from '../../oauth/compile.ts';
import type { Caller, CallerDirectory, Proof, SchemeEnforcer, SchemeFailure, SecurityRequest } from './types.ts';
import type { CompiledApi, Snapshot } from '../snapshot.ts';
import { subscriptionFor } from '../subscriptions.ts';
import type { SubscriptionInfo } from '../subscriptions.ts';

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
  /** The user registries the API's catalog enables (basic schemes name one). */
  registries?: CatalogRegistries;
  /** The native OAuth providers the API's catalog enables (oauth2 schemes name one). */
  providers?: ReadonlyMap<string, CompiledProvider>;
  /** The API's provider org: a TLS profile limited to some orgs (`orgs`) is usable only with one of them. */
  org?: string;
}

// One introspection client (and cache) per API document and endpoint, shared by its operations.
const introspectors = new WeakMap<object, Map<string, Introspector>>();

// An API property in API Connect: the Authorization header the gateway sends to the endpoint.
const introspectAuthorization = 'x-introspect-basic-authorization-header';

const defaultIntrospection: IntrospectionSettings = {
  timeoutMs: 5000,
  cacheMs: 60_000,
  cacheEntries: 10_000,
};

function enforcerFor(
  scheme: SupportedScheme,
  document: Record<string, unknown>,
  options: SecurityCompileOptions | undefined,
): SchemeEnforcer | string {
  if (scheme.role === 'client-id') return clientIdScheme(scheme);
  if (scheme.role === 'client-secret') return clientSecretScheme(scheme);
  if (scheme.role === 'basic') return userScheme(scheme, options?.registries);
  if (scheme.role === 'oauth2-native') return providerScheme(scheme, options?.providers);
  const introspect = scheme.introspect!;
  const settings = options?.settings;
  const profiles = { tlsProfiles: settings === undefined ? {} : tlsProfilesOf(settings, options?.org) };
  if (introspect.tlsProfile !== undefined && !Object.hasOwn(profiles.tlsProfiles, introspect.tlsProfile)) {
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
      dispatcher: dispatcherFor(introspect.tlsProfile, profiles),
      settings: settings?.introspection ?? defaultIntrospection,
    });
    byEndpoint.set(key, introspector);
  }
  return oauth2IntrospectScheme(scheme, introspector);
}

/** A basic scheme against the registry it names, or why this catalog cannot enforce it. */
function userScheme(scheme: SupportedScheme, registries: CatalogRegistries | undefined): SchemeEnforcer | string {
  const registry = registries?.get(scheme.registry!);
  if (registry === undefined) {
    return `security scheme ${scheme.scheme} names user registry ${scheme.registry}, which this catalog does not enable`;
  }
  return 'refused' in registry
    ? `security scheme ${scheme.scheme}: ${registry.refused}`
    : basicScheme(scheme, registry);
}

/** A native OAuth scheme against the provider it names, or why this catalog cannot enforce it. */
function providerScheme(
  scheme: SupportedScheme,
  providers: ReadonlyMap<string, CompiledProvider> | undefined,
): SchemeEnforcer | string {
  const provider = providers?.get(scheme.provider!);
  if (provider === undefined) {
    return `security scheme ${scheme.scheme} names OAuth provider ${scheme.provider}, which this catalog does not enable`;
  }
  return nativeOAuthScheme(scheme, provider);
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

/** What the snapshot tells the security phase about callers of `api`: never the database. */
export function callerDirectory(
  snapshot: Pick<Snapshot, 'credentials' | 'revoked'>,
  api: CompiledApi,
): CallerDirectory {
  return {
    credentials: snapshot.credentials,
    subscriptionFor: (appId) => subscriptionFor(api, appId),
    revoked: snapshot.revoked,
  };
}

/**
 * Who calls this operation. Without a verified secret (or token), an unknown client id, an
 * unsubscribed one and one whose subscription awaits approval get the same 401, so the answer
 * does not tell a valid client id from an invalid one. Only an operation with a scheme that asks
 * another server (a user registry, introspection) answers with a promise.
 * @throws PorticoError `GW_UNAUTHORIZED`, `GW_USER_UNAUTHORIZED`, `GW_INVALID_TOKEN` (401),
 *   `GW_NOT_SUBSCRIBED` (ownership proved), `GW_INSUFFICIENT_SCOPE` (403),
 *   `GW_REGISTRY_UNAVAILABLE` / `GW_INTROSPECTION_UNAVAILABLE` (503) or `GW_SECURITY_UNSUPPORTED`;
 *   `params.clientId` holds the client id presented, for the activity log, and `headers` the
 *   `WWW-Authenticate` challenge of the scheme the caller could satisfy (RFC 7617, RFC 6750 §3).
 */
export function authenticate(
  security: OperationSecurity,
  request: SecurityRequest,
  directory: CallerDirectory,
): Caller | Promise<Caller> {
  if (security.refused) throw new PorticoError('GW_SECURITY_UNSUPPORTED');
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
    // A scheme that asks another server runs only when everything before it held: a caller
    // without a valid client id cannot make the gateway call a registry or an endpoint for free.
    // So does an app that cannot call this API and whose owner has not proved itself: a known,
    // unsubscribed client id buys no registry or endpoint call either (nor tells it is known).
    for (const scheme of alternative) {
      const failed =
        failures.some((failure) => failure !== undefined) || !appStands(proof, subscriptionOf(proof, directory));
      failures.push(scheme.asynchronous === true && failed ? 'missing' : await scheme.check(request, proof, directory));
    }
    const outcome = conclude(alternative, failures, proof, directory);
    if (tally.add(outcome, proof)) return outcome as Caller;
  }
  return tally.verdict(security);
}

/** Why an alternative did not hold, with the kind of scheme that decided it. */
type Failure =
  | { reason: 'failed' | 'not-subscribed' | 'pending' }
  | { reason: Exclude<SchemeFailure, 'missing'>; kind: SchemeEnforcer['kind'] };
type Outcome = Caller | Failure;

const failed: Failure = { reason: 'failed' };

/** One alternative: every scheme must hold (all synchronous ones run, so an early failure costs what a late one does). */
function conclude(
  alternative: readonly SchemeEnforcer[],
  failures: ReadonlyArray<SchemeFailure | undefined>,
  proof: Proof,
  directory: CallerDirectory,
): Outcome {
  // A user's or a token's verdict matters only when the app's schemes held (or when its
  // authority is down: fail closed with a 503, not a 401 that blames the caller). A known client
  // id that cannot call this API, presented without its secret, has not held either: were the
  // user's or token's verdict given for it, the answer would tell a known client id (of any
  // organization) from an unknown one.
  const credential = proof.credential;
  const subscription = subscriptionOf(proof, directory);
  const appFailed =
    failures.some((failure, index) => failure !== undefined && alternative[index].kind === 'app') ||
    !appStands(proof, subscription);
  for (let index = 0; index < failures.length; index++) {
    const failure = failures[index];
    if (failure === undefined || failure === 'missing' || alternative[index].kind === 'app') continue;
    if (!appFailed || failure === 'unavailable') return { reason: failure, kind: alternative[index].kind };
  }
  if (failures.some((failure) => failure !== undefined)) return failed;
  if (credential === undefined) return proof.user === undefined ? failed : { user: proof.user };
  if (subscription !== undefined && subscription.state === 'active') {
    const caller: Caller = { clientId: proof.clientId, credential, subscription };
    if (proof.scopes !== undefined) Object.assign(caller, { scopes: proof.scopes, claims: proof.claims });
    if (proof.user !== undefined) caller.user = proof.user;
    return caller;
  }
  // Only a caller who proved ownership of the client id learns why it is refused.
  if (!proof.secretVerified) return failed;
  return { reason: subscription === undefined ? 'not-subscribed' : 'pending' };
}

/** The subscription of the app proved so far to this API, if any (looked up once per alternative). */
function subscriptionOf(proof: Proof, directory: CallerDirectory): SubscriptionInfo | undefined {
  return proof.credential === undefined ? undefined : directory.subscriptionFor(proof.credential.app.id);
}

/** Whether the app proved so far may be answered about: none presented, its owner proved, or subscribed to this API. */
function appStands(proof: Proof, subscription: SubscriptionInfo | undefined): boolean {
  return proof.credential === undefined || proof.secretVerified || subscription?.state === 'active';
}

/** The failures of every alternative, and the one answer they make. */
class Tally {
  private presented: string | undefined;
  private unsubscribed: PorticoError | undefined;
  private missingScopes: readonly string[] | undefined;
  private unavailable: SchemeEnforcer['kind'] | undefined;
  private rejected: SchemeEnforcer['kind'] | undefined;

  /** Records one alternative's outcome; true when it is a caller. */
  add(outcome: Outcome, proof: Proof): boolean {
    this.presented ??= proof.clientId;
    if (!('reason' in outcome)) return true;
    const { reason } = outcome;
    if (reason === 'not-subscribed' || reason === 'pending') {
      const text = reason === 'pending' ? 'the subscription is pending approval' : 'no subscription';
      this.unsubscribed ??= new PorticoError('GW_NOT_SUBSCRIBED', { clientId: proof.clientId, reason: text });
    }
    if (reason === 'forbidden') this.missingScopes ??= proof.missingScopes;
    if (reason === 'unavailable') this.unavailable ??= outcome.kind;
    if (reason === 'rejected') this.rejected ??= outcome.kind;
    return false;
  }

  verdict(security: OperationSecurity & { refused: false }): Caller {
    if (security.open) return anonymous;
    const clientId = this.presented;
    if (this.missingScopes !== undefined) {
      const scope = this.missingScopes.join(' ');
      const challenge = `Bearer error="insufficient_scope", scope="${scope}"`;
      throw new PorticoError('GW_INSUFFICIENT_SCOPE', { clientId, scope }, challenged(challenge));
    }
    if (this.unsubscribed !== undefined) throw this.unsubscribed;
    if (this.unavailable === 'user') throw new PorticoError('GW_REGISTRY_UNAVAILABLE', { clientId });
    if (this.unavailable !== undefined) throw new PorticoError('GW_INTROSPECTION_UNAVAILABLE', { clientId });
    if (this.rejected === 'bearer') {
      throw new PorticoError('GW_INVALID_TOKEN', { clientId }, challenged('Bearer error="invalid_token"'));
    }
    const schemes = security.alternatives.flat();
    // RFC 6750 §3.1 / RFC 7617: a request without credentials gets the challenge of a scheme it
    // could satisfy (a token's without an error code).
    const challenge = schemes.find((scheme) => scheme.challenge !== undefined)?.challenge;
    const onlyUsers = schemes.every((scheme) => scheme.kind === 'user');
    const code = this.rejected === 'user' || onlyUsers ? 'GW_USER_UNAUTHORIZED' : 'GW_UNAUTHORIZED';
    throw new PorticoError(code, { clientId }, challenged(challenge));
  }
}

/** The `WWW-Authenticate` field a refusal carries, when a scheme has a challenge. */
function challenged(challenge: string | undefined): { headers?: Record<string, string> } {
  return challenge === undefined ? {} : { headers: { 'WWW-Authenticate': challenge } };
}

/**
 * Header and query names any of the API's security schemes names (client ids and secrets, as
 * written: supported or not), lower-cased, for activity-log redaction; computed once per API.
 */
export function credentialNames(document: Record<string, unknown>): {
  headers: Set<string>;
  query: Set<string>;
} {
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
