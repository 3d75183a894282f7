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
import { basicScheme } from './basic.ts';
import { clientIdScheme } from './client-id.ts';
import { clientSecretScheme } from './client-secret.ts';
import type { Caller, CallerDirectory, Proof, SchemeEnforcer, SchemeFailure, SecurityRequest } from './types.ts';

export type { Caller, CallerDirectory, SecurityRequest } from './types.ts';

/** One operation's compiled security. */
export type OperationSecurity =
  | { refused: false; open: boolean; alternatives: readonly SchemeEnforcer[][] }
  | { refused: true; reason: string };

const noRegistries: CatalogRegistries = new Map();

/** One scheme compiled, or why it cannot be enforced in this catalog. */
function enforcer(scheme: SupportedScheme, registries: CatalogRegistries): SchemeEnforcer | string {
  if (scheme.role === 'client-id') return clientIdScheme(scheme);
  if (scheme.role === 'client-secret') return clientSecretScheme(scheme);
  const registry = registries.get(scheme.registry!);
  if (registry === undefined) {
    return `security scheme ${scheme.scheme} names user registry ${scheme.registry}, which this catalog does not enable`;
  }
  return 'refused' in registry ? `security scheme ${scheme.scheme}: ${registry.refused}` : basicScheme(scheme, registry);
}

/**
 * Compiles the security in force for one operation of an API document (as stored, maybe never
 * validated); `registries` are the user registries the catalog enables.
 */
export function compileOperationSecurity(
  document: Record<string, unknown>,
  operation: Record<string, unknown>,
  registries: CatalogRegistries = noRegistries,
): OperationSecurity {
  const apiWide = apiSecurityRefusal(document);
  if (apiWide) return { refused: true, reason: apiWide.reason };
  const plan = securityPlan(effectiveSecurity(document, operation), declaredSchemes(document));
  if (Array.isArray(plan)) return { refused: true, reason: plan.map((refusal) => refusal.reason).join('; ') };
  const alternatives: SchemeEnforcer[][] = [];
  for (const schemes of plan.alternatives) {
    const compiled = schemes.map((scheme) => enforcer(scheme, registries));
    const reasons = compiled.filter((item): item is string => typeof item === 'string');
    if (reasons.length > 0) return { refused: true, reason: reasons.join('; ') };
    alternatives.push(compiled as SchemeEnforcer[]);
  }
  return { refused: false, open: plan.open, alternatives };
}

const anonymous: Caller = Object.freeze({});

/** What the alternatives tried so far left behind, to choose the error when none holds. */
interface Attempts {
  presented?: string;
  unsubscribed?: PorticoError;
  userRefused: boolean;
  unavailable: boolean;
}

/**
 * Who calls this operation: synchronous unless a scheme asks a user registry. Without a verified
 * secret, an unknown client id, an unsubscribed one and one whose subscription awaits approval
 * get the same 401, so the answer does not tell a valid client id from an invalid one.
 * @throws PorticoError `GW_UNAUTHORIZED` / `GW_USER_UNAUTHORIZED` (`params.challenge` holds the
 *   `WWW-Authenticate` value when a basic scheme could hold), `GW_NOT_SUBSCRIBED` (secret
 *   verified), `GW_REGISTRY_UNAVAILABLE` or `GW_SECURITY_UNSUPPORTED`; `params.clientId` holds
 *   the client id presented, for the activity log.
 */
export function authenticate(
  security: OperationSecurity,
  request: SecurityRequest,
  directory: CallerDirectory,
): Caller | Promise<Caller> {
  if (security.refused) throw new PorticoError('GW_SECURITY_UNSUPPORTED', { reason: security.reason });
  return tryFrom(security, request, directory, 0, { userRefused: false, unavailable: false });
}

function tryFrom(
  security: Extract<OperationSecurity, { refused: false }>,
  request: SecurityRequest,
  directory: CallerDirectory,
  first: number,
  attempts: Attempts,
): Caller | Promise<Caller> {
  for (let index = first; index < security.alternatives.length; index++) {
    const alternative = security.alternatives[index];
    const proof: Proof = { secretVerified: false };
    const outcome = prove(alternative, request, proof, directory);
    if (outcome instanceof Promise) {
      return outcome.then((settled) => {
        const caller = settle(settled, proof, attempts);
        return caller ?? tryFrom(security, request, directory, index + 1, attempts);
      });
    }
    const caller = settle(outcome, proof, attempts);
    if (caller !== undefined) return caller;
  }
  if (security.open) return anonymous;
  throw refusal(security, attempts);
}

/** The caller when the alternative held; otherwise notes why it did not. */
function settle(outcome: Outcome, proof: Proof, attempts: Attempts): Caller | undefined {
  attempts.presented ??= proof.clientId;
  if (typeof outcome !== 'string') return outcome;
  if (outcome === 'user-refused') attempts.userRefused = true;
  if (outcome === 'unavailable') attempts.unavailable = true;
  if (outcome === 'not-subscribed' || outcome === 'pending') {
    const reason = outcome === 'pending' ? 'the subscription is pending approval' : 'no subscription';
    attempts.unsubscribed ??= new PorticoError('GW_NOT_SUBSCRIBED', { clientId: proof.clientId, reason });
  }
  return undefined;
}

function refusal(security: Extract<OperationSecurity, { refused: false }>, attempts: Attempts): PorticoError {
  if (attempts.unavailable) return new PorticoError('GW_REGISTRY_UNAVAILABLE', { clientId: attempts.presented });
  if (attempts.unsubscribed) return attempts.unsubscribed;
  const schemes = security.alternatives.flat();
  const challenge = schemes.find((scheme) => scheme.challenge !== undefined)?.challenge;
  const onlyUsers = !schemes.some((scheme) => scheme.challenge === undefined);
  const code = attempts.userRefused || onlyUsers ? 'GW_USER_UNAUTHORIZED' : 'GW_UNAUTHORIZED';
  return new PorticoError(code, { clientId: attempts.presented, challenge });
}

type Outcome = Caller | 'failed' | 'user-refused' | 'unavailable' | 'not-subscribed' | 'pending';

/**
 * One alternative: every scheme must hold (all synchronous checks run, so a failure early costs
 * what one late does); registry checks run after, only when the others held.
 */
function prove(
  alternative: readonly SchemeEnforcer[],
  request: SecurityRequest,
  proof: Proof,
  directory: CallerDirectory,
): Outcome | Promise<Outcome> {
  let failed = false;
  let asks = false;
  for (const scheme of alternative) {
    if (scheme.check(request, proof, directory) !== undefined) failed = true;
    if (scheme.verify !== undefined) asks = true;
  }
  if (failed || !asks) return caller(failed, proof, directory);
  return verifyAll(alternative, request, proof).then((failure) => {
    if (failure === 'unavailable') return 'unavailable';
    if (failure !== undefined) return 'user-refused';
    return caller(false, proof, directory);
  });
}

async function verifyAll(alternative: readonly SchemeEnforcer[], request: SecurityRequest, proof: Proof) {
  let failure: SchemeFailure | undefined;
  for (const scheme of alternative) {
    if (scheme.verify === undefined) continue;
    const result = await scheme.verify(request, proof);
    if (result === 'unavailable' || failure === undefined) failure = result ?? failure;
  }
  return failure;
}

/** The caller an alternative whose schemes held proves: a user, an app with a subscription, or both. */
function caller(failed: boolean, proof: Proof, directory: CallerDirectory): Outcome {
  const credential = proof.credential;
  if (failed) return 'failed';
  if (credential === undefined) return proof.user === undefined ? 'failed' : { user: proof.user };
  const subscription = directory.subscriptionFor(credential.app.id);
  if (subscription !== undefined && subscription.state === 'active') {
    return { clientId: proof.clientId, credential, subscription, user: proof.user };
  }
  // Only a caller who proved ownership of the client id learns why it is refused.
  if (!proof.secretVerified) return 'failed';
  return subscription === undefined ? 'not-subscribed' : 'pending';
}

/**
 * Header and query names any of the API's security schemes names (client ids and secrets, as
 * written: supported or not), lower-cased, for activity-log redaction; computed once per API.
 */
export function credentialNames(document: Record<string, unknown>): { headers: Set<string>; query: Set<string> } {
  const names = { headers: new Set<string>(), query: new Set<string>() };
  for (const scheme of Object.values(declaredSchemes(document))) {
    if (typeof scheme !== 'object' || scheme === null) continue;
    const { name, in: where, type } = scheme as { name?: unknown; in?: unknown; type?: unknown; scheme?: unknown };
    if (type === 'basic' || type === 'http') names.headers.add('authorization');
    if (typeof name !== 'string') continue;
    if (where === 'query') names.query.add(name);
    else if (where === 'header') names.headers.add(name.toLowerCase());
  }
  return names;
}
