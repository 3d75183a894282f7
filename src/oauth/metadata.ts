/**
 * Authorization server metadata (RFC 8414) and the JWKS (RFC 7517) of a provider: what a client
 * library discovers, and the public keys a resource server outside Portico verifies tokens with.
 */
import type { ServerResponse } from 'node:http';
import { issuer, sendJson } from './http.ts';
import type { EndpointContext } from './http.ts';

/** The provider's endpoint paths below its base path. */
export const endpointPaths = {
  introspect: '/oauth2/introspect',
  revoke: '/oauth2/revoke',
  jwks: '/oauth2/jwks',
  metadata: '/.well-known/oauth-authorization-server',
};

/** The RFC 8414 §2 document. */
export function metadataDocument(context: EndpointContext): Record<string, unknown> {
  const config = context.provider.config;
  const base = issuer(context);
  const grantTypes = config.grants.map(
    (grant) => ({ application: 'client_credentials', access_code: 'authorization_code', password: 'password' })[grant],
  );
  if (config.refreshToken.enabled && grantTypes.some((grant) => grant !== 'client_credentials'))
    grantTypes.push('refresh_token');
  const clientAuth = ['client_secret_basic', 'client_secret_post'];
  const metadata: Record<string, unknown> = {
    issuer: base,
    token_endpoint: `${base}${config.tokenPath}`,
    jwks_uri: `${base}${endpointPaths.jwks}`,
    scopes_supported: Object.keys(config.scopes),
    response_types_supported: config.grants.includes('access_code') ? ['code'] : [],
    grant_types_supported: grantTypes,
    token_endpoint_auth_methods_supported: config.clients.includes('public') ? [...clientAuth, 'none'] : clientAuth,
    introspection_endpoint: `${base}${endpointPaths.introspect}`,
    introspection_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint: `${base}${endpointPaths.revoke}`,
    revocation_endpoint_auth_methods_supported: clientAuth,
    authorization_response_iss_parameter_supported: true,
  };
  if (config.grants.includes('access_code')) {
    metadata.authorization_endpoint = `${base}${config.authorizePath}`;
    if (config.pkce.enabled)
      metadata.code_challenge_methods_supported = config.pkce.allowPlain ? ['S256', 'plain'] : ['S256'];
  }
  return metadata;
}

export function metadataEndpoint(res: ServerResponse, context: EndpointContext): void {
  sendJson(res, 200, metadataDocument(context), { 'cache-control': 'max-age=60' });
}

/** Every key that still verifies, so tokens signed before a rotation keep validating elsewhere too. */
export function jwksEndpoint(res: ServerResponse, context: EndpointContext): void {
  const keys = [...context.provider.keys.values()].map((key) => key.jwk);
  sendJson(res, 200, { keys }, { 'cache-control': 'max-age=60' });
}
