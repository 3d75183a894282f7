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
import { clientIdScheme } from './client-id.ts';
import { clientSecretScheme } from './client-secret.ts';
import type { Caller, CallerDirectory, Proof, SchemeEnforcer, SecurityRequest } from './types.ts';

export type { Caller, CallerDirectory, SecurityRequest } from './types.ts';

/** One operation's compiled security. */
export type OperationSecurity =
  | { refused: false; open: boolean; alternatives: readonly SchemeEnforcer[][] }
  | { refused: true; reason: string };

const enforcers: Record<SupportedScheme['role'], (scheme: SupportedScheme) => SchemeEnforcer> = {
  'client-id': clientIdScheme,
  'client-secret': clientSecretScheme,
};

/** Compiles the security in force for one operation of an API document (as stored, maybe never validated). */
export function compileOperationSecurity(
  document: Record<string, unknown>,
  operation: Record<string, unknown>,
): OperationSecurity {
  const apiWide = apiSecurityRefusal(document);
  if (apiWide) return { refused: true, reason: apiWide.reason };
  const plan = securityPlan(effectiveSecurity(document, operation), declaredSchemes(document));
  if (Array.isArray(plan)) return { refused: true, reason: plan.map((refusal) => refusal.reason).join('; ') };
  const alternatives = plan.alternatives.map((schemes) => schemes.map((scheme) => enforcers[scheme.role](scheme)));
  return { refused: false, open: plan.open, alternatives };
}

const anonymous: Caller = Object.freeze({});

/**
 * Who calls this operation. Without a verified secret, an unknown client id, an unsubscribed
 * one and one whose subscription awaits approval get the same 401, so the answer does not tell
 * a valid client id from an invalid one.
 * @throws PorticoError `GW_UNAUTHORIZED`, `GW_NOT_SUBSCRIBED` (secret verified) or `GW_SECURITY_UNSUPPORTED`;
 *   `params.clientId` holds the client id presented, for the activity log.
 */
export function authenticate(
  security: OperationSecurity,
  request: SecurityRequest,
  directory: CallerDirectory,
): Caller {
  if (security.refused) throw new PorticoError('GW_SECURITY_UNSUPPORTED', { reason: security.reason });
  let presented: string | undefined;
  let unsubscribed: PorticoError | undefined;
  for (const alternative of security.alternatives) {
    const proof: Proof = { secretVerified: false };
    const outcome = prove(alternative, request, proof, directory);
    presented ??= proof.clientId;
    if (typeof outcome !== 'string') return outcome;
    if (outcome === 'not-subscribed' || outcome === 'pending') {
      const reason = outcome === 'pending' ? 'the subscription is pending approval' : 'no subscription';
      unsubscribed ??= new PorticoError('GW_NOT_SUBSCRIBED', { clientId: proof.clientId, reason });
    }
  }
  if (security.open) return anonymous;
  throw unsubscribed ?? new PorticoError('GW_UNAUTHORIZED', { clientId: presented });
}

type Outcome = Caller | 'failed' | 'not-subscribed' | 'pending';

/** One alternative: every scheme must hold (all run, so a failure early costs what one late does). */
function prove(
  alternative: readonly SchemeEnforcer[],
  request: SecurityRequest,
  proof: Proof,
  directory: CallerDirectory,
): Outcome {
  let failed = false;
  for (const scheme of alternative) if (scheme.check(request, proof, directory) !== undefined) failed = true;
  const credential = proof.credential;
  if (failed || credential === undefined) return 'failed';
  const subscription = directory.subscriptionFor(credential.app.id);
  if (subscription !== undefined && subscription.state === 'active') {
    return { clientId: proof.clientId, credential, subscription };
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
    const { name, in: where } = scheme as { name?: unknown; in?: unknown };
    if (typeof name !== 'string') continue;
    if (where === 'query') names.query.add(name);
    else if (where === 'header') names.headers.add(name.toLowerCase());
  }
  return names;
}
