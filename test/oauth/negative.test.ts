/**
 * What the native OAuth provider refuses, each with the RFC's error and nothing issued: wrong
 * secret, wrong redirect URI, replayed code (which revokes what it issued), missing or wrong
 * PKCE verifier, plain PKCE when not allowed, unknown grant, scope not offered, expired token,
 * a token of another catalog, a scope not granted, an API naming a provider the catalog does
 * not enable.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { signAccessToken } from '../../src/oauth/keys.ts';
import { basic, consentCode, postForm, startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

const verifier = 'v'.repeat(43) + 'erifier-0123456789';
const challenge = createHash('sha256').update(verifier).digest('base64url');

describe('native OAuth provider: refusals', () => {
  let o: OAuthPlatform;
  let token: string;
  let authorize: string;

  before(async () => {
    o = await startOAuthPlatform();
    token = `${o.issuer}/oauth2/token`;
    authorize = `${o.issuer}/oauth2/authorize`;
  });
  after(() => o.close());

  const clientCredentials = (fields: Record<string, string> = {}, secret = o.app.clientSecret) =>
    postForm(token, { grant_type: 'client_credentials', ...fields }, basic(o.app.clientId, secret));

  /** A code for the app, as the consent page gives it (signed in as alice), without a browser. */
  const code = (extra: Record<string, string> = {}) => consentCode(o, extra);

  test('a wrong client secret is 401 invalid_client with WWW-Authenticate; nothing issued', async () => {
    const answer = await clientCredentials({}, 'wrong-secret');
    assert.equal(answer.status, 401);
    assert.equal(answer.body?.error, 'invalid_client');
    assert.match(answer.headers.get('www-authenticate') ?? '', /^Basic realm=/);
    assert.equal(answer.body?.access_token, undefined);
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });

  test('two client authentication methods at once are invalid_request', async () => {
    const answer = await postForm(
      token,
      { grant_type: 'client_credentials', client_secret: o.app.clientSecret },
      basic(o.app.clientId, o.app.clientSecret),
    );
    assert.deepEqual([answer.status, answer.body?.error], [400, 'invalid_request']);
  });

  test('an unknown grant type is unsupported_grant_type; a scope the provider does not offer is invalid_scope', async () => {
    assert.equal(
      (await postForm(token, { grant_type: 'urn:example:magic' }, basic(o.app.clientId, o.app.clientSecret))).body
        ?.error,
      'unsupported_grant_type',
    );
    const answer = await clientCredentials({ scope: 'read admin' });
    assert.deepEqual([answer.status, answer.body?.error], [400, 'invalid_scope']);
  });

  test('an unregistered redirect URI gets an error page, never a redirect', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: 'https://evil.example/cb',
      state: 'x',
    });
    const answer = await fetch(`${authorize}?${query}`, { redirect: 'manual' });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers.get('location'), null);
    assert.match(await answer.text(), /redirect URI is not one the application registered/);
    // Exact match: a prefix, or another path on the same origin, is not the registered URI.
    const near = new URLSearchParams({
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: `${o.redirectUri}/more`,
    });
    assert.equal((await fetch(`${authorize}?${near}`, { redirect: 'manual' })).status, 400);
  });

  test('a code redeemed with another redirect_uri is invalid_grant', async () => {
    const answer = await postForm(
      token,
      { grant_type: 'authorization_code', code: await code(), redirect_uri: `${o.redirectUri}?x=1` },
      basic(o.app.clientId, o.app.clientSecret),
    );
    assert.deepEqual([answer.status, answer.body?.error], [400, 'invalid_grant']);
  });

  test('a replayed code is invalid_grant and revokes the tokens it issued', async () => {
    const issued = await code();
    const fields = { grant_type: 'authorization_code', code: issued, redirect_uri: o.redirectUri };
    const first = await postForm(token, fields, basic(o.app.clientId, o.app.clientSecret));
    assert.equal(first.status, 200);
    const access = String(first.body!.access_token);
    assert.equal(
      (await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${access}` } })).status,
      200,
    );
    const replay = await postForm(token, fields, basic(o.app.clientId, o.app.clientSecret));
    assert.deepEqual([replay.status, replay.body?.error, replay.body?.access_token], [400, 'invalid_grant', undefined]);
    assert.equal(
      (await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${access}` } })).status,
      401,
    );
    const refresh = await postForm(
      token,
      { grant_type: 'refresh_token', refresh_token: String(first.body!.refresh_token) },
      basic(o.app.clientId, o.app.clientSecret),
    );
    assert.equal(refresh.body?.error, 'invalid_grant');
  });

  test('a missing or wrong PKCE verifier is invalid_grant', async () => {
    for (const sent of [undefined, 'w'.repeat(50)]) {
      const issued = await code({ code_challenge: challenge, code_challenge_method: 'S256' });
      const fields: Record<string, string> = {
        grant_type: 'authorization_code',
        code: issued,
        redirect_uri: o.redirectUri,
      };
      if (sent !== undefined) fields.code_verifier = sent;
      const answer = await postForm(token, fields, basic(o.app.clientId, o.app.clientSecret));
      assert.deepEqual([answer.status, answer.body?.error], [400, 'invalid_grant'], String(sent));
    }
  });

  test('plain PKCE is refused when allow_plain is false: the error goes back to the client with its state', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: o.redirectUri,
      state: 'st',
      code_challenge: verifier,
      code_challenge_method: 'plain',
    });
    const answer = await fetch(`${authorize}?${query}`, { redirect: 'manual' });
    assert.equal(answer.status, 302);
    const location = new URL(answer.headers.get('location')!);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.equal(location.searchParams.get('state'), 'st');
  });

  test('a consent form posted without its CSRF cookie issues no code', async () => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: o.redirectUri,
      scope: 'read',
    });
    const page = await fetch(`${authorize}?${query}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
    const form = new URLSearchParams({
      ...Object.fromEntries(query),
      csrf,
      username: 'alice',
      password: 'wonderland',
      decision: 'allow',
    });
    const answer = await fetch(authorize, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.headers.get('location'), null);
  });

  test('password grant: a wrong resource owner password is invalid_grant, the right one is served', async () => {
    const answer = await postForm(
      token,
      { grant_type: 'password', username: 'alice', password: 'nope', scope: 'read' },
      basic(o.app.clientId, o.app.clientSecret),
    );
    assert.deepEqual([answer.status, answer.body?.error], [400, 'invalid_grant']);
    const ok = await postForm(
      token,
      { grant_type: 'password', username: 'alice', password: 'wonderland', scope: 'read' },
      basic(o.app.clientId, o.app.clientSecret),
    );
    assert.equal(ok.status, 200);
  });

  test('RFC 7009 §2.1: revoking a token issued to another client is refused and the token stays valid', async () => {
    const other = await o.p.newApp('default');
    const owner = basic(o.app.clientId, o.app.clientSecret);
    const issued = await postForm(
      token,
      { grant_type: 'password', username: 'alice', password: 'wonderland', scope: 'read' },
      owner,
    );
    const access = String(issued.body!.access_token);
    const refresh = String(issued.body!.refresh_token);
    for (const presented of [access, refresh]) {
      const answer = await postForm(
        `${o.issuer}/oauth2/revoke`,
        { token: presented },
        basic(other.clientId, other.clientSecret),
      );
      assert.deepEqual([answer.status, answer.body?.error], [400, 'unauthorized_client']);
    }
    await o.p.t.platform.gateway!.reload();
    assert.equal(
      (await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${access}` } })).status,
      200,
    );
    const introspect = (presented: string) => postForm(`${o.issuer}/oauth2/introspect`, { token: presented }, owner);
    assert.equal((await introspect(access)).body?.active, true);
    assert.equal((await introspect(refresh)).body?.active, true);
    // The owner itself may revoke it; an unknown token is still answered 200 (RFC 7009 §2.2).
    assert.equal((await postForm(`${o.issuer}/oauth2/revoke`, { token: access }, owner)).status, 200);
    assert.equal((await postForm(`${o.issuer}/oauth2/revoke`, { token: 'no-such-token' }, owner)).status, 200);
  });

  test('an expired token is 401 invalid_token', async () => {
    const provider = o.p.t.platform.gateway!.current!.oauth.get('acme/sandbox')!.byName.get('demo-oauth')!;
    const now = Math.floor(Date.now() / 1000);
    const origin = o.p.t.gateway;
    const claims = {
      iss: o.issuer,
      sub: o.app.clientId,
      aud: `${origin}/acme/sandbox`,
      iat: now - 7200,
      exp: now - 60,
      jti: 'expired-1',
      client_id: o.app.clientId,
      scope: 'read',
      grant_id: 'g-expired',
    };
    const expired = signAccessToken(claims, provider.current!);
    const answer = await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${expired}` } });
    assert.equal(answer.status, 401);
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
    // The same token unexpired is served: it is the expiry that refused it.
    const fresh = signAccessToken({ ...claims, exp: now + 60, jti: 'fresh-1' }, provider.current!);
    assert.equal((await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${fresh}` } })).status, 200);
  });

  test('a token of another catalog is refused, even signed with the same provider key', async () => {
    const provider = o.p.t.platform.gateway!.current!.oauth.get('acme/sandbox')!.byName.get('demo-oauth')!;
    const now = Math.floor(Date.now() / 1000);
    const origin = o.p.t.gateway;
    const claims = {
      iss: `${origin}/acme/other/oauth`,
      sub: o.app.clientId,
      aud: `${origin}/acme/other`,
      iat: now,
      exp: now + 600,
      jti: 'other-1',
      client_id: o.app.clientId,
      scope: 'read',
      grant_id: 'g-other',
    };
    const answer = await fetch(`${o.p.base}/thing?n=1`, {
      headers: { authorization: `Bearer ${signAccessToken(claims, provider.current!)}` },
    });
    assert.equal(answer.status, 401);
  });

  test('a scope not granted is 403 insufficient_scope', async () => {
    const read = await clientCredentials({ scope: 'read' });
    const answer = await fetch(`${o.p.base}/write?n=1`, {
      headers: { authorization: `Bearer ${String(read.body!.access_token)}` },
    });
    assert.equal(answer.status, 403);
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="write"');
  });

  test('publishing an API that names a provider the catalog does not enable is refused', async () => {
    await assert.rejects(
      o.p.publish({
        swagger: '2.0',
        info: { title: 'Sec', version: '1.0.0', 'x-ibm-name': 'sec' },
        basePath: '/sec',
        securityDefinitions: {
          o: {
            type: 'oauth2',
            flow: 'application',
            tokenUrl: 'https://x/token',
            scopes: {},
            'x-ibm-oauth-provider': 'nobody',
          },
        },
        security: [{ o: [] }],
        paths: { '/thing': { get: { responses: { 200: { description: 'ok' } } } } },
      }),
      (error: { params?: { rule?: string } }) => error.params?.rule === 'unknown-oauth-provider',
    );
  });
});
