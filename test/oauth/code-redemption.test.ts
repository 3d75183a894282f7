/**
 * Redeeming an authorization code (RFC 6749 §4.1.3): redirect_uri is required at the token
 * endpoint only when the authorization request named it, and a code or refresh token presented by
 * anyone but its own client (or with a wrong PKCE verifier, or redirect_uri) is refused without
 * being used up, so whoever learned it cannot burn it for the client it was issued to.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/security-api.ts';
import { basic, consentCode, postForm, startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

const verifier = 'c'.repeat(43) + 'ode-redemption-0123';
const challenge = createHash('sha256').update(verifier).digest('base64url');

describe('native OAuth provider: redeeming a code', () => {
  let o: OAuthPlatform;
  let token: string;
  let owner: Record<string, string>;
  let other: TestApp;

  before(async () => {
    o = await startOAuthPlatform();
    token = `${o.issuer}/oauth2/token`;
    owner = basic(o.app.clientId, o.app.clientSecret);
    other = await o.p.newApp('default');
  });
  after(() => o.close());

  const redeem = (code: string, fields: Record<string, string> = {}, headers = owner) =>
    postForm(token, { grant_type: 'authorization_code', code, ...fields }, headers);
  const callApi = async (access: unknown) =>
    (await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${String(access)}` } })).status;

  describe('redirect_uri (RFC 6749 §4.1.3)', () => {
    test('a code asked for without redirect_uri is redeemed without it', async () => {
      const code = await consentCode(o, { redirect_uri: undefined });
      const answer = await redeem(code);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(await callApi(answer.body!.access_token), 200);
    });

    test('a code asked for without redirect_uri is refused with another URI, and redeemed with the one it went to', async () => {
      const code = await consentCode(o, { redirect_uri: undefined });
      const wrong = await redeem(code, { redirect_uri: `${o.redirectUri}?x=1` });
      assert.deepEqual([wrong.status, wrong.body?.error], [400, 'invalid_grant']);
      assert.equal((await redeem(code, { redirect_uri: o.redirectUri })).status, 200);
    });

    test('a code asked for with redirect_uri is refused without it, and redeemed with it', async () => {
      const code = await consentCode(o);
      const without = await redeem(code);
      assert.deepEqual([without.status, without.body?.error], [400, 'invalid_grant']);
      assert.equal((await redeem(code, { redirect_uri: o.redirectUri })).status, 200);
    });
  });

  describe('who may use a code up', () => {
    test('another client gets the answer an unknown code gets, and the code stays usable by its own client', async () => {
      const code = await consentCode(o);
      const fields = { redirect_uri: o.redirectUri };
      const intruder = basic(other.clientId, other.clientSecret);
      const stolen = await redeem(code, fields, intruder);
      const unknown = await redeem('no-such-code-0123456789', fields, intruder);
      assert.equal(stolen.status, 400);
      assert.deepEqual(stolen.body, unknown.body);
      const rightful = await redeem(code, fields);
      assert.equal(rightful.status, 200, JSON.stringify(rightful.body));
      assert.equal(await callApi(rightful.body!.access_token), 200);
    });

    test('another client presenting a used code revokes nothing', async () => {
      const code = await consentCode(o);
      const fields = { redirect_uri: o.redirectUri };
      const rightful = await redeem(code, fields);
      assert.equal(rightful.status, 200);
      const replay = await redeem(code, fields, basic(other.clientId, other.clientSecret));
      assert.deepEqual([replay.status, replay.body?.error], [400, 'invalid_grant']);
      await o.p.t.platform.gateway!.reload();
      assert.equal(await callApi(rightful.body!.access_token), 200);
      const refreshed = await postForm(
        token,
        { grant_type: 'refresh_token', refresh_token: String(rightful.body!.refresh_token) },
        owner,
      );
      assert.equal(refreshed.status, 200);
    });

    test('a wrong client secret leaves the code usable', async () => {
      const code = await consentCode(o);
      const fields = { redirect_uri: o.redirectUri };
      assert.equal((await redeem(code, fields, basic(o.app.clientId, 'wrong-secret'))).status, 401);
      assert.equal((await redeem(code, fields)).status, 200);
    });

    test('a public client: a wrong PKCE verifier leaves the code usable with the right one', async () => {
      const code = await consentCode(o, { code_challenge: challenge, code_challenge_method: 'S256' });
      const fields = { redirect_uri: o.redirectUri, client_id: o.app.clientId };
      const guessed = await redeem(code, { ...fields, code_verifier: 'g'.repeat(50) }, {});
      assert.deepEqual([guessed.status, guessed.body?.error], [400, 'invalid_grant']);
      const rightful = await redeem(code, { ...fields, code_verifier: verifier }, {});
      assert.equal(rightful.status, 200, JSON.stringify(rightful.body));
    });

    test('two redemptions at once: one is served, the other refused', async () => {
      const code = await consentCode(o);
      const fields = { redirect_uri: o.redirectUri };
      const answers = await Promise.all([redeem(code, fields), redeem(code, fields)]);
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 400]);
    });

    test('another client presenting a refresh token leaves it usable by its own client', async () => {
      const issued = await postForm(
        token,
        { grant_type: 'password', username: 'alice', password: 'wonderland', scope: 'read' },
        owner,
      );
      const refresh = { grant_type: 'refresh_token', refresh_token: String(issued.body!.refresh_token) };
      const stolen = await postForm(token, refresh, basic(other.clientId, other.clientSecret));
      assert.deepEqual([stolen.status, stolen.body?.error], [400, 'invalid_grant']);
      const rightful = await postForm(token, refresh, owner);
      assert.equal(rightful.status, 200, JSON.stringify(rightful.body));
      assert.equal(await callApi(rightful.body!.access_token), 200);
    });
  });
});
