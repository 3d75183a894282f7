/**
 * Introspection (RFC 7662) and revocation (RFC 7009), both for authenticated confidential
 * clients and only about the client's own tokens: another client's token is "not active" to its
 * introspection, and its revocation is refused (RFC 7009 §2.1). A revocation is a row in the store and a change on the change feed, so
 * every gateway node refuses the token as soon as it has the next snapshot (~1 s).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oauth from '../store/oauth.ts';
import { hashToken } from '../store/secrets.ts';
import { checkAccessToken } from './compile.ts';
import { authenticateClient, OAuthError, readForm, sendJson } from './http.ts';
import type { EndpointContext } from './http.ts';
import { verifySignature } from './keys.ts';
import { revokeGrant } from './token.ts';

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function readTokenRequest(req: IncomingMessage, context: EndpointContext) {
  const form = await readForm(req);
  const client = authenticateClient(req, form, context, false);
  const token = form.get('token');
  if (token === null || token === '') throw new OAuthError('invalid_request', 'token is required');
  return { client, token };
}

/** RFC 7662 §2.2: `active` and, for an active token, what it grants. */
export async function introspectEndpoint(
  req: IncomingMessage,
  res: ServerResponse,
  context: EndpointContext,
): Promise<void> {
  const { client, token } = await readTokenRequest(req, context);
  const claims = checkAccessToken(context.provider, token, context.revoked);
  if (claims !== undefined && claims.client_id === client.clientId) {
    const { scope, client_id, sub, aud, iss, exp, iat, jti, username } = claims;
    const answer = {
      active: true,
      scope,
      client_id,
      token_type: 'Bearer',
      sub,
      aud,
      iss,
      exp,
      iat,
      jti,
      username,
    };
    return sendJson(res, 200, answer);
  }
  const refresh = claims === undefined ? await oauth.findRefreshToken(context.store.db, hashToken(token)) : undefined;
  const live = refresh !== undefined && refresh.used === 0 && refresh.expires_at > nowSeconds();
  if (live && refresh.client_id === client.clientId && refresh.provider_id === context.provider.id) {
    const { scope, client_id, expires_at: exp } = refresh;
    const answer = {
      active: true,
      scope,
      client_id,
      token_type: 'refresh_token',
      exp,
      ...(refresh.username === '' ? {} : { username: refresh.username }),
    };
    return sendJson(res, 200, answer);
  }
  sendJson(res, 200, { active: false });
}

/**
 * RFC 7009 §2.1: "verifies whether the token was issued to the client making the revocation
 * request. If this validation fails, the request is refused" with an RFC 6749 §5.2 error. The
 * client did authenticate (not `invalid_client`) and the token is valid (not `invalid_grant`):
 * this authenticated client is not authorized to revoke it, `unauthorized_client`.
 */
function notIssuedTo(): OAuthError {
  return new OAuthError('unauthorized_client', 'the token was not issued to this client');
}

/**
 * RFC 7009 §2: revokes an access token (until it expires) or a refresh token with its whole
 * grant (§2.1: the access tokens of the grant too). An unknown or invalid token is answered 200
 * as well (§2.2): the client's goal, the token being unusable, is met. A token of another client
 * is refused (§2.1) and stays valid.
 */
export async function revokeEndpoint(
  req: IncomingMessage,
  res: ServerResponse,
  context: EndpointContext,
): Promise<void> {
  const { client, token } = await readTokenRequest(req, context);
  const claims = verifySignature(token, context.provider.keys);
  if (claims !== undefined) {
    if (claims.client_id !== client.clientId) throw notIssuedTo();
    if (claims.exp > nowSeconds()) {
      await oauth.insertRevocation(context.store.db, claims.jti, claims.exp);
      await context.changed('oauth-revocation');
    }
    return sendJson(res, 200, {});
  }
  const refresh = await oauth.findRefreshToken(context.store.db, hashToken(token));
  if (refresh !== undefined && refresh.provider_id === context.provider.id) {
    if (refresh.client_id !== client.clientId) throw notIssuedTo();
    await revokeGrant(context, refresh.grant_id);
  }
  sendJson(res, 200, {});
}
