/**
 * Signs a resource owner in against the provider's user registry (consent page, password grant)
 * through the gateway's SignInLimiter, so the authorize and token endpoints cannot be used to
 * guess passwords faster than the portal and console allow. The attempt is reserved before the
 * registry is asked; once the limit is reached the password is not checked at all.
 */
import { basicHeaderFor } from '../identity/types.ts';
import { PorticoError } from '../errors.ts';
import type { EndpointContext } from './http.ts';

export type OwnerSignIn =
  | { outcome: 'authenticated'; user: string }
  | { outcome: 'refused' }
  | { outcome: 'unavailable' }
  | { outcome: 'limited'; seconds: number };

class RegistryUnavailable extends Error {}

export async function signInOwner(context: EndpointContext, username: string, password: string): Promise<OwnerSignIn> {
  const registry = context.provider.registry;
  if (registry === undefined || 'refused' in registry) return { outcome: 'unavailable' };
  // Namespaced per provider; case-folded so Alice and alice share one budget.
  const attempt = {
    account: `oauth|${context.provider.id}|${username.toLowerCase()}`,
    address: context.address,
  };
  try {
    const user = await context.signInLimiter.guard(attempt, async () => {
      const verdict = await registry.verify({
        username,
        password,
        header: basicHeaderFor(username, password),
      });
      if (verdict.outcome === 'refused') throw new PorticoError('MGMT_BAD_CREDENTIALS');
      // Not the owner's fault: the reservation is given back.
      if (verdict.outcome === 'unavailable') throw new RegistryUnavailable(verdict.reason);
      return verdict.user;
    });
    return { outcome: 'authenticated', user };
  } catch (error) {
    if (error instanceof RegistryUnavailable) return { outcome: 'unavailable' };
    if (!(error instanceof PorticoError)) throw error;
    if (error.code === 'MGMT_BAD_CREDENTIALS') return { outcome: 'refused' };
    if (error.code === 'MGMT_TOO_MANY_ATTEMPTS')
      return { outcome: 'limited', seconds: Number(error.params.seconds ?? 1) };
    throw error;
  }
}
