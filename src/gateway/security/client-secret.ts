/**
 * The client secret scheme: an apiKey header or query parameter whose SHA-256 must match the
 * stored hash of the credential the client id named (compared in constant time).
 */
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { secretMatches } from '../../store/secrets.ts';
import { readCredential } from './types.ts';
import type { SchemeEnforcer } from './types.ts';

// Hashed when the client id was unknown, so an unknown id costs what a wrong secret costs.
const noHash = '0'.repeat(64);

/** Compiles a client secret scheme; it runs after the requirement's client id scheme. */
export function clientSecretScheme(scheme: SupportedScheme): SchemeEnforcer {
  const lowerName = scheme.name.toLowerCase();
  return {
    scheme: scheme.scheme,
    kind: 'app',
    check: function clientSecret(request, proof) {
      const presented = readCredential(request, scheme.in, lowerName, scheme.name);
      if (presented === undefined || presented === '') return 'missing';
      const matches = secretMatches(presented, proof.credential?.secretHash ?? noHash);
      if (!matches || proof.credential === undefined) return 'rejected';
      proof.secretVerified = true;
      return undefined;
    },
  };
}
