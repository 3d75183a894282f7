/**
 * The basic scheme (IBM "Creating a basic authentication security definition"): the caller's
 * `Authorization: Basic` user name and password (RFC 7617) are checked by the user registry
 * the definition names with `x-ibm-authentication-registry`. The registry call is the only
 * I/O; its compiled configuration comes from the snapshot.
 */
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { parseBasicHeader } from '../../identity/types.ts';
import type { UserVerifier } from '../../identity/types.ts';
import type { SchemeEnforcer } from './types.ts';

/** Compiles a basic scheme against the registry it names (already found in the catalog). */
export function basicScheme(scheme: SupportedScheme, verifier: UserVerifier): SchemeEnforcer {
  return {
    scheme: scheme.scheme,
    kind: 'user',
    asynchronous: true,
    // RFC 7617 §2: the realm names the protection space; here, the registry that checks.
    challenge: `Basic realm="${verifier.registry}"`,
    check: function basic(request, proof) {
      const credentials = parseBasicHeader(request.headers.authorization);
      if (credentials === undefined) return 'missing';
      return verifier.verify(credentials).then((verdict) => {
        if (verdict.outcome === 'unavailable') return 'unavailable';
        if (verdict.outcome === 'refused') return 'rejected';
        proof.user = verdict.user;
        return undefined;
      });
    },
  };
}
