/**
 * The OAuth 2 bearer scheme for tokens of a third-party provider (IBM "Integrating third party
 * OAuth provider": an oauth2 definition with `x-tokenIntrospect`). The token is read as RFC
 * 6750 §2.1 says, checked by RFC 7662 introspection, and must carry every scope the
 * requirement names; its `client_id` is the app, so subscriptions and plan limits apply as
 * for a client id. The native provider (issue 14) reuses this module with its own token check.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { SupportedScheme } from '../../definitions/security-support.ts';
import type { Introspector, TokenInfo } from './introspection.ts';
import type { CallerDirectory, Proof, SchemeEnforcer, SchemeFailure, SecurityRequest } from './types.ts';

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token
const bearerPattern = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
// IBM: request headers named x-introspect-* are passed on to the introspection endpoint.
const forwardedPrefix = 'x-introspect-';

/** The bearer token of an `Authorization` header, `null` when one is there but malformed. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined | null {
  const value = headers.authorization;
  if (value === undefined || value === '') return undefined;
  return bearerPattern.exec(value)?.[1] ?? null;
}

/** Compiles an oauth2 scheme whose tokens `introspector` checks. */
export function oauth2IntrospectScheme(scheme: SupportedScheme, introspector: Introspector): SchemeEnforcer {
  const required = scheme.scopes ?? [];
  return {
    scheme: scheme.scheme,
    asynchronous: true,
    kind: 'bearer',
    challenge: 'Bearer',
    check: function oauth2Introspect(request, proof, directory) {
      const token = bearerToken(request.headers);
      if (token === undefined) return 'missing';
      if (token === null) return 'rejected';
      const answer = introspector.lookup(token, forwardedHeaders(request));
      if (answer instanceof Promise) return answer.then((info) => grant(info, required, proof, directory));
      return grant(answer, required, proof, directory);
    },
  };
}

function forwardedHeaders(request: SecurityRequest): Record<string, string> {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.startsWith(forwardedPrefix) && typeof value === 'string') forwarded[name] = value;
  }
  return forwarded;
}

/** What a token's answer (introspected, or verified by the native provider) proves about the caller. */
export function grant(
  info: TokenInfo | 'unavailable',
  required: readonly string[],
  proof: Proof,
  directory: CallerDirectory,
): SchemeFailure | undefined {
  if (info === 'unavailable') return 'unavailable';
  if (!info.active || info.clientId === undefined) return 'rejected';
  // A client id presented beside the token must be the one the token was issued to.
  if (proof.clientId !== undefined && proof.clientId !== info.clientId) return 'rejected';
  const credential = directory.credentials.get(info.clientId);
  if (credential === undefined) return 'rejected';
  proof.clientId = info.clientId;
  proof.credential = credential;
  proof.secretVerified = true;
  proof.scopes = info.scopes;
  proof.claims = info.claims;
  const missing = required.filter((scope) => !info.scopes.includes(scope));
  if (missing.length === 0) return undefined;
  proof.missingScopes = missing;
  return 'forbidden';
}
