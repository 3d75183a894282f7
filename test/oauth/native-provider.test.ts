/**
 * The native OAuth provider (issue 14) driven by an unmodified client library, oauth4webapi,
 * against a real gateway: discovery (RFC 8414), client credentials, authorization code + PKCE
 * through the consent page in Chromium, refresh with rotation, introspection and revocation,
 * then calls to the API with each token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

const insecure = { [oauth.allowInsecureRequests]: true };

async function callApi(url: string, token: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return {
    status: response.status,
    body: await response.text(),
    challenge: response.headers.get('www-authenticate'),
  };
}

describe('native OAuth provider with oauth4webapi', () => {
  let o: OAuthPlatform;
  let as: oauth.AuthorizationServer;
  let client: oauth.Client;
  let auth: oauth.ClientAuth;
  let browser: Browser;

  before(async () => {
    o = await startOAuthPlatform();
    const issuer = new URL(o.issuer);
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    client = { client_id: o.app.clientId };
    auth = oauth.ClientSecretBasic(o.app.clientSecret);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await o?.close();
  });

  test("discovery answers RFC 8414 metadata at the well-known URI with the provider's endpoints", () => {
    assert.equal(as.issuer, o.issuer);
    assert.equal(as.token_endpoint, `${o.issuer}/oauth2/token`);
    assert.equal(as.authorization_endpoint, `${o.issuer}/oauth2/authorize`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.scopes_supported, ['read', 'write']);
  });

  test('client credentials: a token that calls the API; its scope is the one asked for', async () => {
    const response = await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'read' }, insecure);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const tokens = await oauth.processClientCredentialsResponse(as, client, response);
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.scope, 'read');
    assert.equal(tokens.refresh_token, undefined, 'RFC 6749 §4.4.3: no refresh token for client credentials');
    assert.deepEqual(await callApi(`${o.p.base}/thing?n=1`, tokens.access_token), {
      status: 200,
      body: 'served',
      challenge: null,
    });
    const write = await callApi(`${o.p.base}/write?n=1`, tokens.access_token);
    assert.equal(write.status, 403);
    assert.equal(write.challenge, 'Bearer error="insufficient_scope", scope="write"');
  });

  test('client_secret_post authenticates as well', async () => {
    const post = oauth.ClientSecretPost(o.app.clientSecret);
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, post, {}, insecure),
    );
    assert.equal(tokens.scope, 'read write', 'no scope asked: every scope of the provider');
    assert.equal((await callApi(`${o.p.base}/write?n=1`, tokens.access_token)).status, 200);
  });

  async function consent(url: URL, user = 'alice', password = 'wonderland'): Promise<URL> {
    const page = await browser.newPage();
    try {
      const answer = await page.goto(url.href);
      assert.equal(answer?.headers()['x-frame-options'], 'DENY');
      assert.match(answer?.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      await page.fill('#username', user);
      await page.fill('#password', password);
      await Promise.all([page.waitForURL((target) => target.href.startsWith(o.redirectUri)), page.click('#allow')]);
      return new URL(page.url());
    } finally {
      await page.close();
    }
  }

  async function authorizationUrl(verifier: string, state: string, scope = 'read write') {
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', client.client_id);
    url.searchParams.set('redirect_uri', o.redirectUri);
    url.searchParams.set('scope', scope);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return url;
  }

  test('authorization code + PKCE through the consent page, then refresh with rotation; reuse revokes the grant', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const callback = await consent(await authorizationUrl(verifier, state));
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      o.redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    assert.equal(tokens.scope, 'read write');
    assert.ok(tokens.refresh_token);
    assert.equal((await callApi(`${o.p.base}/write?n=1`, tokens.access_token)).status, 200);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, insecure),
    );
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'rotation: a new refresh token each time');
    assert.equal((await callApi(`${o.p.base}/thing?n=1`, refreshed.access_token)).status, 200);

    // The first refresh token again: reuse. Refused, and the whole grant is revoked.
    await assert.rejects(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token, insecure),
      ),
      (error: oauth.ResponseBodyError) => error.error === 'invalid_grant' && error.status === 400,
    );
    await assert.rejects(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, insecure),
      ),
      (error: oauth.ResponseBodyError) => error.error === 'invalid_grant',
    );
    const afterReuse = await callApi(`${o.p.base}/thing?n=1`, refreshed.access_token);
    assert.equal(afterReuse.status, 401);
    assert.equal(afterReuse.challenge, 'Bearer error="invalid_token"');
  });

  test('a public client (no secret) completes the code flow with PKCE', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = oauth.validateAuthResponse(
      as,
      client,
      await consent(await authorizationUrl(verifier, state, 'read')),
      state,
    );
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.None(),
      params,
      o.redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    assert.equal((await callApi(`${o.p.base}/thing?n=1`, tokens.access_token)).status, 200);
  });

  test('introspection (RFC 7662) and revocation (RFC 7009): a revoked token is refused at once', async () => {
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: 'read' }, insecure),
    );
    const info = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
    );
    assert.equal(info.active, true);
    assert.equal(info.client_id, client.client_id);
    assert.equal(info.scope, 'read');
    assert.equal(info.iss, o.issuer);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure),
    );
    const after = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
    );
    assert.equal(after.active, false);
    assert.equal((await callApi(`${o.p.base}/thing?n=1`, tokens.access_token)).status, 401);
  });

  test('JWKS lists the signing key; the token is an RFC 9068 at+jwt bound to the app', async () => {
    const tokens = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, {}, insecure),
    );
    const [header, payload] = tokens.access_token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'ES256');
    assert.equal(payload.client_id, client.client_id);
    const jwks = (await (await fetch(as.jwks_uri!)).json()) as { keys: Array<{ kid: string }> };
    assert.ok(jwks.keys.some((key) => key.kid === header.kid));
  });
});
