/**
 * The OAuth 2 bearer scheme for tokens of Portico's own provider (an oauth2 definition with
 * `x-ibm-oauth-provider`): the JWT access token is verified here, from the snapshot alone and
 * synchronously (signature, expiry, issuer and audience of this catalog, the revoked set), then
 * treated as an introspection answer would be: its `client_id` is the app, so subscriptions and
 * plan limits apply, and every scope the requirement names must be granted.
 */
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { checkAccessToken } from '../../oauth/compile.ts';
import type { CompiledProvider } from '../../oauth/compile.ts';
import { bearerToken, grant } from './oauth2.ts';
import type { SchemeEnforcer } from './types.ts';

const noneRevoked: ReadonlySet<string> = new Set();

/** Compiles an oauth2 scheme whose tokens `provider` issued. */
export function nativeOAuthScheme(scheme: SupportedScheme, provider: CompiledProvider): SchemeEnforcer {
  const required = scheme.scopes ?? [];
  return {
    scheme: scheme.scheme,
    kind: 'bearer',
    challenge: 'Bearer',
    check: function nativeOAuth(request, proof, directory) {
      const token = bearerToken(request.headers);
      if (token === undefined) return 'missing';
      if (token === null) return 'rejected';
      const claims = checkAccessToken(provider, token, directory.revoked ?? noneRevoked);
      if (claims === undefined) return 'rejected';
      const scopes = claims.scope === '' ? [] : claims.scope.split(' ');
      const info = {
        active: true as const,
        scopes,
        clientId: claims.client_id,
        exp: claims.exp,
        claims: claims as unknown as Record<string, unknown>,
      };
      return grant(info, required, proof, directory);
    },
  };
}
