/**
 * The token endpoint (RFC 6749 §3.2): client credentials (`application`), authorization code
 * with PKCE (RFC 7636), refresh with rotation (RFC 6749 §6; OAuth 2.0 Security BCP §4.14: a
 * refresh token works once, and presenting a used one revokes the whole grant), and the
 * resource owner password grant when the provider enables it. Codes and refresh tokens are
 * kept as SHA-256 hashes only.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oauth from '../store/oauth.ts';
import { hashToken, newToken } from '../store/secrets.ts';
import { authenticateClient, clientAuthenticationFailed, issuer, OAuthError, readForm, sendJson } from './http.ts';
import type { Client, EndpointContext } from './http.ts';
import { signAccessToken } from './keys.ts';
import { signInOwner } from './owner-sign-in.ts';
import { maxAccessTokenTtl } from './provider-config.ts';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The scope a request asks for, checked against what may be granted (RFC 6749 §3.3). */
export function grantedScope(requested: string | null, allowed: readonly string[]): string {
  if (requested === null || requested.trim() === '') return allowed.join(' ');
  const asked = [...new Set(requested.split(' ').filter(Boolean))];
  const unknown = asked.filter((scope) => !allowed.includes(scope));
  if (unknown.length > 0) throw new OAuthError('invalid_scope', `scope ${unknown.join(' ')} cannot be granted`);
  return asked.join(' ');
}

interface Issue {
  client: Client;
  scope: string;
  grantId: string;
  username?: string;
  refresh: boolean;
}

/** Signs an access token and, when asked, stores a new refresh token of the same grant. */
async function issue(context: EndpointContext, request: Issue): Promise<Record<string, unknown>> {
  const { provider } = context;
  const key = provider.current;
  if (key === undefined) throw new OAuthError('server_error', 'the provider has no signing key', 500);
  const iat = nowSeconds();
  const ttl = provider.config.accessTokenTtl;
  const claims = {
    iss: issuer(context),
    sub: request.username ?? request.client.clientId,
    aud: `${context.origin}${provider.audiencePath}`,
    exp: iat + ttl,
    iat,
    jti: randomUUID(),
    client_id: request.client.clientId,
    scope: request.scope,
    grant_id: request.grantId,
    ...(request.username === undefined ? {} : { username: request.username }),
  };
  const answer: Record<string, unknown> = {
    access_token: signAccessToken(claims, key),
    token_type: 'Bearer',
    expires_in: ttl,
    scope: request.scope,
  };
  if (request.refresh && provider.config.refreshToken.enabled) {
    const refreshToken = newToken();
    await oauth.insertRefreshToken(context.store.db, {
      token_hash: hashToken(refreshToken),
      grant_id: request.grantId,
      provider_id: provider.id,
      catalog_id: provider.catalogId,
      client_id: request.client.clientId,
      scope: request.scope,
      username: request.username ?? '',
      expires_at: iat + provider.config.refreshToken.ttl,
      // Whether the client proved its secret now: only a public client's grant refreshes without one.
      public_client: request.client.confidential ? 0 : 1,
    });
    answer.refresh_token = refreshToken;
  }
  return answer;
}

/**
 * Revokes what a grant issued, on every node: its refresh tokens and its access tokens until they
 * expire. The grant's access tokens may have been signed under a longer `access_token_ttl` than
 * the provider's current one (an admin may have lowered it since), and their `exp` is not stored;
 * so the revocation lasts the longest lifetime any provider setting allows (`maxAccessTokenTtl`,
 * 24 h), which no access token outlives. The cost is one revoked id a day longer at most.
 */
export async function revokeGrant(context: EndpointContext, grantId: string): Promise<void> {
  await oauth.revokeGrant(context.store.db, grantId, nowSeconds() + maxAccessTokenTtl);
  await context.changed('oauth-revocation');
}

function grantEnabled(context: EndpointContext, grant: 'application' | 'access_code' | 'password'): void {
  if (!context.provider.config.grants.includes(grant)) {
    throw new OAuthError('unsupported_grant_type', 'this provider does not issue tokens for this grant type');
  }
}

function clientCredentials(context: EndpointContext, client: Client, form: URLSearchParams) {
  grantEnabled(context, 'application');
  const scope = grantedScope(form.get('scope'), Object.keys(context.provider.config.scopes));
  // RFC 6749 §4.4.3: a refresh token SHOULD NOT be included.
  return issue(context, { client, scope, grantId: randomUUID(), refresh: false });
}

// RFC 7636 §4.1: code-verifier = 43*128unreserved
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;

function pkceHolds(challenge: string | null, method: string | null, verifier: string | null): boolean {
  if (challenge === null) return verifier === null;
  if (verifier === null || !verifierPattern.test(verifier)) return false;
  const computed = method === 'plain' ? verifier : createHash('sha256').update(verifier).digest('base64url');
  const a = Buffer.from(computed);
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

interface Redeemable {
  provider_id: string;
  catalog_id: string;
  client_id: string;
  expires_at: number;
}

/**
 * A one-time code or refresh token as the store holds it, checked before it is used: this
 * provider's and catalog's, the authenticated client's own, and unexpired. Anything else is
 * `invalid`, the answer an unknown one gets, so another client learns nothing and uses up nothing.
 */
function owned<T extends Redeemable>(
  context: EndpointContext,
  client: Client,
  row: T | undefined,
  invalid: OAuthError,
): T {
  if (row === undefined || row.provider_id !== context.provider.id) throw invalid;
  if (row.catalog_id !== context.provider.catalogId || row.client_id !== client.clientId) throw invalid;
  if (row.expires_at <= nowSeconds()) throw invalid;
  return row;
}

/**
 * Uses a checked code or refresh token up. Taken before (a replay by its own client, or a
 * redemption racing this one): someone holds a copy, so the whole grant is revoked (RFC 6749
 * §4.1.2, §10.5; OAuth 2.0 Security BCP §4.14).
 */
async function useUp(
  context: EndpointContext,
  grantId: string,
  taken: { first: boolean } | undefined,
  invalid: OAuthError,
): Promise<void> {
  if (taken === undefined) throw invalid;
  if (!taken.first) {
    await revokeGrant(context, grantId);
    throw invalid;
  }
}

/**
 * RFC 6749 §4.1.3: redirect_uri is required if the authorization request included it, and then
 * identical. Left out there (one registered URI), it may be left out here; sent, it must be the
 * URI the code went to.
 */
function redirectUriHolds(row: { redirect_uri: string; redirect_uri_named: number }, sent: string | null): boolean {
  if (sent === null) return row.redirect_uri_named === 0;
  return sent === row.redirect_uri;
}

async function authorizationCode(context: EndpointContext, client: Client, form: URLSearchParams) {
  grantEnabled(context, 'access_code');
  const code = form.get('code');
  if (code === null || code === '') throw new OAuthError('invalid_request', 'code is required');
  const hash = hashToken(code);
  const invalid = new OAuthError('invalid_grant', 'the authorization code is invalid, expired or already used');
  // Every check before the code is used: a request that fails one leaves it to its client.
  const row = owned(context, client, await oauth.findCode(context.store.db, hash), invalid);
  if (!redirectUriHolds(row, form.get('redirect_uri')))
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  if (!pkceHolds(row.challenge, row.challenge_method, form.get('code_verifier'))) {
    throw new OAuthError('invalid_grant', 'the PKCE code_verifier does not match the code_challenge');
  }
  if (!client.confidential && row.challenge === null) throw invalid;
  await useUp(context, row.grant_id, await oauth.takeCode(context.store.db, hash, client.clientId), invalid);
  return issue(context, {
    client,
    scope: row.scope,
    grantId: row.grant_id,
    username: row.username,
    refresh: true,
  });
}

async function refreshToken(context: EndpointContext, client: Client, form: URLSearchParams) {
  // A provider whose refresh tokens were turned off honours none it issued before (fail closed).
  if (!context.provider.config.refreshToken.enabled)
    throw new OAuthError('unsupported_grant_type', 'this provider does not issue tokens for this grant type');
  const presented = form.get('refresh_token');
  if (presented === null || presented === '') throw new OAuthError('invalid_request', 'refresh_token is required');
  const hash = hashToken(presented);
  const invalid = new OAuthError('invalid_grant', 'the refresh token is invalid, expired or revoked');
  const row = owned(context, client, await oauth.findRefreshToken(context.store.db, hash), invalid);
  // RFC 6749 §6: a confidential client authenticates on refresh. Only a grant issued to a public
  // client (PKCE, no secret) refreshes with the client id alone. Checked before the token is
  // used, so a request without the secret changes nothing, as a wrong secret changes nothing.
  if (!client.confidential && row.public_client !== 1) throw clientAuthenticationFailed(context);
  const scope = grantedScope(form.get('scope'), row.scope.split(' ').filter(Boolean));
  await useUp(context, row.grant_id, await oauth.takeRefreshToken(context.store.db, hash, client.clientId), invalid);
  const username = row.username === '' ? undefined : row.username;
  return issue(context, { client, scope, grantId: row.grant_id, username, refresh: true });
}

async function passwordGrant(context: EndpointContext, client: Client, form: URLSearchParams) {
  grantEnabled(context, 'password');
  const username = form.get('username');
  const password = form.get('password');
  if (!username || password === null) throw new OAuthError('invalid_request', 'username and password are required');
  const verdict = await signInOwner(context, username, password);
  if (verdict.outcome === 'unavailable')
    throw new OAuthError('temporarily_unavailable', 'the user registry cannot be used', 503);
  if (verdict.outcome === 'refused') throw new OAuthError('invalid_grant', 'invalid resource owner credentials');
  if (verdict.outcome === 'limited') {
    // RFC 6749 §4.3.2 asks for brute-force protection; §5.2 keeps the answer a 400 invalid_grant.
    const description = `too many sign-in attempts for this resource owner; try again in ${verdict.seconds} seconds`;
    throw new OAuthError('invalid_grant', description, 400, { 'retry-after': String(verdict.seconds) });
  }
  const scope = grantedScope(form.get('scope'), Object.keys(context.provider.config.scopes));
  return issue(context, { client, scope, grantId: randomUUID(), username: verdict.user, refresh: true });
}

/** Answers a token request. */
export async function tokenEndpoint(
  req: IncomingMessage,
  res: ServerResponse,
  context: EndpointContext,
): Promise<void> {
  const form = await readForm(req);
  const grantType = form.get('grant_type');
  if (grantType === null) throw new OAuthError('invalid_request', 'grant_type is required');
  // Public clients (no secret) only where PKCE binds the grant: authorization code, and the
  // refresh of a grant issued to a public client (refreshToken checks which the grant was).
  const client = authenticateClient(
    req,
    form,
    context,
    grantType === 'authorization_code' || grantType === 'refresh_token',
  );
  let answer: Record<string, unknown>;
  if (grantType === 'client_credentials') {
    if (!client.confidential) throw new OAuthError('unauthorized_client', 'client credentials need a client secret');
    answer = await clientCredentials(context, client, form);
  } else if (grantType === 'authorization_code') answer = await authorizationCode(context, client, form);
  else if (grantType === 'refresh_token') answer = await refreshToken(context, client, form);
  else if (grantType === 'password') answer = await passwordGrant(context, client, form);
  else throw new OAuthError('unsupported_grant_type', `grant_type ${grantType.slice(0, 50)} is not supported`);
  sendJson(res, 200, answer);
}
