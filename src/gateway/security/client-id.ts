/**
 * The client id scheme (IBM "Creating an API key security definition"): an apiKey header or
 * query parameter naming an app's credential in the snapshot.
 */
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { readCredential } from './types.ts';
import type { SchemeEnforcer } from './types.ts';

/** Compiles a client id scheme: the credential must be present and known. */
export function clientIdScheme(scheme: SupportedScheme): SchemeEnforcer {
  const lowerName = scheme.name.toLowerCase();
  return {
    scheme: scheme.scheme,
    kind: 'app',
    check: function clientId(request, proof, directory) {
      const presented = readCredential(request, scheme.in, lowerName, scheme.name);
      if (presented === undefined || presented === '') return 'missing';
      proof.clientId = presented;
      const credential = directory.credentials.get(presented);
      if (credential === undefined) return 'rejected';
      proof.credential = credential;
      return undefined;
    },
  };
}
