/**
 * The portal's part of the native OAuth provider, over HTTP against a real platform: a developer
 * registers redirect URIs on the app page (checked, Post/Redirect/Get, then honoured by the
 * gateway's authorize endpoint); the API page shows the provider's endpoints, grants and scopes
 * for an operation it secures; Try it gets a client credentials token itself and shows its
 * scopes and expiry, never keeping the secret or showing the token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTryRequest, relayTryIt } from '../../src/portal/try-it.ts';
import type { OperationView } from '../../src/web/openapi-view.ts';
import { WebClient } from '../helpers/web-client.ts';
import { startOAuthPlatform } from '../oauth/oauth-helpers.ts';
import type { OAuthPlatform } from '../oauth/oauth-helpers.ts';

const apiPage = '/products/sec/1.0.0/apis/sec/1.0.0';

describe('portal: OAuth redirect URIs, provider endpoints and Try it with a token', () => {
  let o: OAuthPlatform;
  let client: WebClient;
  let appPath: string;

  before(async () => {
    o = await startOAuthPlatform();
    client = new WebClient(o.p.t.platform.urls.portal!);
    assert.equal(await client.signIn(o.app.email, 'dev-pass-1234'), 303);
    appPath = /href="(\/apps\/[0-9a-f-]{36})"/.exec((await client.get('/apps')).text)![1];
  });
  after(() => o.close());

  test('the app page lists the registered redirect URIs; a bad one is refused with the text kept', async () => {
    const page = await client.get(appPath);
    assert.match(page.text, new RegExp(`<textarea id="redirect_uris"[^>]*>\n?${o.redirectUri}</textarea>`));
    const refused = await client.post(`${appPath}/redirect-uris`, {
      redirect_uris: `${o.redirectUri}\njavascript:alert(1)`,
    });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /javascript:alert\(1\) is not an absolute URI without a fragment/);
    assert.match(refused.text, /javascript:alert\(1\)<\/textarea>/);
    assert.match((await client.get(appPath)).text, new RegExp(`>\n?${o.redirectUri}</textarea>`), 'nothing stored');
  });

  test('a redirect URI hiding javascript: behind a control character or space is refused', async () => {
    for (const bad of ['\x01javascript:alert(1)', '\x1fjavascript:alert(1)//', '\x7fjavascript:alert(1)']) {
      const refused = await client.post(`${appPath}/redirect-uris`, { redirect_uris: `${o.redirectUri}\n${bad}` });
      assert.equal(refused.status, 400, JSON.stringify(bad));
      assert.match(refused.text, /is not an absolute URI without a fragment/);
    }
    for (const bad of ['ftp://app.example/cb', 'data:text/html,x']) {
      const refused = await client.post(`${appPath}/redirect-uris`, { redirect_uris: `${o.redirectUri}\n${bad}` });
      assert.equal(refused.status, 400, bad);
    }
    assert.match((await client.get(appPath)).text, new RegExp(`>\n?${o.redirectUri}</textarea>`), 'nothing stored');
  });

  test('saving redirect URIs answers 303 to the app page, and the gateway accepts the new one exactly', async () => {
    const added = 'https://app.example/oauth/callback';
    const saved = await client.post(`${appPath}/redirect-uris`, {
      redirect_uris: `${o.redirectUri}\n${added}`,
    });
    assert.equal(saved.status, 303);
    assert.equal(saved.location, `${appPath}#redirect-uris`);
    assert.match((await client.get(appPath)).text, new RegExp(`>\n?${o.redirectUri}\n${added}</textarea>`));
    await o.p.t.platform.gateway!.reload();
    const query = (uri: string) =>
      new URLSearchParams({
        response_type: 'code',
        client_id: o.app.clientId,
        redirect_uri: uri,
        scope: 'read',
      });
    assert.equal((await fetch(`${o.issuer}/oauth2/authorize?${query(added)}`, { redirect: 'manual' })).status, 200);
    assert.equal(
      (await fetch(`${o.issuer}/oauth2/authorize?${query(`${added}/x`)}`, { redirect: 'manual' })).status,
      400,
    );
  });

  test('the API page shows the provider, the scope each operation needs, its endpoints, grants and scopes', async () => {
    const page = await client.get(apiPage);
    assert.equal(page.status, 200);
    assert.match(
      page.text,
      /from OAuth provider <strong>Demo OAuth<\/strong>;\s+this operation needs <code>read<\/code>/,
    );
    assert.match(page.text, /this operation needs <code>write<\/code>/);
    for (const path of [
      '/oauth2/token',
      '/oauth2/authorize',
      '/.well-known/oauth-authorization-server',
      '/oauth2/jwks',
    ]) {
      assert.ok(page.text.includes(`<code class="url">${o.issuer}${path}</code>`), path);
    }
    assert.match(
      page.text,
      /Client credentials \(application\), Authorization code with PKCE \(access_code\), Resource owner password \(password\)/,
    );
    assert.match(page.text, /<code>write<\/code><\/td><td>Change things<\/td>/);
  });

  async function tryIt(operation: string, secret: string, accept = 'application/json') {
    await client.get(apiPage);
    const appId = appPath.split('/').pop()!;
    const form = { operation, app: appId, clientSecret: secret, 'param.query.n': '1' };
    return client.request('POST', `${apiPage}/try`, { _csrf: client.csrf, ...form }, { accept });
  }

  test('Try it gets a client credentials token with the typed secret and shows its scope and expiry', async () => {
    const read = JSON.parse((await tryIt('get-thing', o.app.clientSecret)).text);
    assert.equal(read.status, 200, JSON.stringify(read));
    assert.equal(read.body, 'served');
    assert.equal(read.token.scope, 'read');
    assert.equal(read.token.expiresIn, 3600);
    assert.ok(Math.abs(Date.parse(read.token.expiresAt) - Date.now() - 3_600_000) < 60_000);
    assert.equal(JSON.stringify(read).includes(o.app.clientSecret), false);
    // The token asked for is the operation's scope: write on /write, which a read token would not pass.
    const write = JSON.parse((await tryIt('get-write', o.app.clientSecret)).text);
    assert.deepEqual([write.status, write.token.scope], [200, 'write']);
  });

  test('Try it with a wrong secret: the token endpoint refusal is shown and no call is made', async () => {
    const answer = JSON.parse((await tryIt('get-thing', 'not-the-secret')).text);
    assert.equal(answer.status, 401);
    assert.match(answer.error, /^The token endpoint refused: invalid_client/);
    assert.equal(answer.token, undefined);
  });

  test('Try it without the script: the page shows the token line, and the secret is not echoed', async () => {
    const page = await tryIt('get-thing', o.app.clientSecret, 'text/html');
    assert.equal(page.status, 200);
    assert.match(page.text, /Access token \(client credentials\): scope <code>read<\/code>, expires in 3600 s/);
    assert.equal(page.text.includes(o.app.clientSecret), false);
  });
});

test('Try it: a path parameter "." or ".." never takes the call out of {gateway}/{org}/{catalog}{basePath}', async () => {
  const operation = { method: 'GET', path: '/v/{a}/{b}', parameters: [] } as unknown as OperationView;
  const input = {
    gatewayUrl: 'http://gw.example:8080',
    orgName: 'acme',
    catalogName: 'sandbox',
    basePath: '/inv',
    operation,
    schemes: [],
    clientId: 'cid',
    timeoutMs: 1000,
  };
  for (const [a, b] of [
    ['..', '..'],
    ['.', 'x'],
    ['x', '..'],
  ]) {
    const values = { 'param.path.a': a, 'param.path.b': b };
    let url: string | undefined;
    try {
      url = buildTryRequest({ ...input, values }).url;
    } catch {
      url = undefined;
    }
    if (url !== undefined) assert.ok(new URL(url).pathname.startsWith('/acme/sandbox/inv/v/'), url);
    const outcome = await relayTryIt({ ...input, values });
    assert.equal(outcome.status, 0);
    assert.match(outcome.error ?? '', /cannot be "\.{1,2}"/, 'refused before any call is made');
  }
  const fine = buildTryRequest({ ...input, values: { 'param.path.a': '..x', 'param.path.b': 'a/../b' } }).url;
  assert.equal(fine, 'http://gw.example:8080/acme/sandbox/inv/v/..x/a%2F..%2Fb');
});
