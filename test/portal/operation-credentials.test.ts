/**
 * Issues 13 (item 6) and 14 (portal): each operation of an API page says which credentials its
 * call needs, and Try it asks for exactly those — against a real gateway, portal, user registry
 * (an authentication URL server) and native OAuth provider. The authorization code grant with
 * PKCE is driven end to end in Debian's Chromium: Try it → the provider's consent page (sign in
 * as alice) → the portal's callback → the call answers 200 with the token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, seriousAccessibilityFindings } from '../helpers/browser.ts';
import { clientIdScheme, clientSecretScheme, secApi } from '../helpers/security-api.ts';
import { WebClient } from '../helpers/web-client.ts';
import { oauthScheme, startOAuthPlatform } from '../oauth/oauth-helpers.ts';
import type { OAuthPlatform } from '../oauth/oauth-helpers.ts';

const apiPage = '/products/sec/1.0.0/apis/sec/1.0.0';

const document = secApi({
  schemes: {
    clientId: clientIdScheme,
    secret: clientSecretScheme,
    people: { type: 'basic', 'x-ibm-authentication-registry': 'people' },
    oauth: oauthScheme,
  },
  security: [{ clientId: [], secret: [] }],
  operations: {
    '/keyed': {},
    '/basic': { security: [{ people: [] }] },
    '/scoped': { security: [{ oauth: ['read'] }] },
    '/open': { security: [] },
  },
});

describe('portal: the credentials each operation needs, and Try it with them', () => {
  let o: OAuthPlatform;
  let client: WebClient;
  let appId: string;

  before(async () => {
    o = await startOAuthPlatform();
    await o.p.publish(document);
    client = new WebClient(o.p.t.platform.urls.portal!);
    assert.equal(await client.signIn(o.app.email, 'dev-pass-1234'), 303);
    appId = /href="\/apps\/([0-9a-f-]{36})"/.exec((await client.get('/apps')).text)![1];
  });
  after(() => o.close());

  /** The credentials sentence under one operation of the API page. */
  function requires(page: string, anchor: string): string {
    const section = page.slice(page.indexOf(`<section class="operation" id="${anchor}"`));
    return /<p class="credentials">([^<]*)<\/p>/.exec(section)![1];
  }

  test('each operation states its credentials: client id + secret, basic, OAuth scopes, open', async () => {
    const page = (await client.get(apiPage)).text;
    assert.equal(
      requires(page, 'get-keyed'),
      'Requires: client id in header X-IBM-Client-Id and client secret in header X-IBM-Client-Secret.',
    );
    assert.equal(
      requires(page, 'get-basic'),
      'Requires: HTTP basic user name and password (Authorization header) of user registry people.',
    );
    assert.equal(
      requires(page, 'get-scoped'),
      'Requires: OAuth 2 bearer token from provider Demo OAuth, flow accessCode, with scope read.',
    );
    assert.equal(requires(page, 'get-open'), 'Requires: no credentials (open to anonymous callers).');
  });

  async function tryIt(operation: string, fields: Record<string, string>) {
    await client.get(apiPage);
    const form = { _csrf: client.csrf, operation, app: appId, 'param.query.n': '1', ...fields };
    const answer = await client.request('POST', `${apiPage}/try`, form, { accept: 'application/json' });
    return JSON.parse(answer.text) as { status: number; body: string; error?: string };
  }

  test('Try it with the client secret: the pasted secret passes, a wrong one is refused by the gateway', async () => {
    const good = await tryIt('get-keyed', { clientSecret: o.app.clientSecret });
    assert.deepEqual([good.status, good.body], [200, 'served']);
    const wrong = await tryIt('get-keyed', { clientSecret: 'not-the-secret' });
    assert.equal(wrong.status, 401);
  });

  test('Try it with HTTP basic: the registry user passes, a wrong password is refused', async () => {
    const calls = o.registryCalls();
    const good = await tryIt('get-basic', { username: 'alice', password: 'wonderland' });
    assert.deepEqual([good.status, good.body], [200, 'served']);
    assert.ok(o.registryCalls() > calls, 'the user registry was asked');
    const wrong = await tryIt('get-basic', { username: 'alice', password: 'looking-glass' });
    assert.equal(wrong.status, 401);
  });

  test('Try it on an open operation answers 200 without credentials', async () => {
    const open = await tryIt('get-open', {});
    assert.deepEqual([open.status, open.body], [200, 'served']);
  });

  test('Try it with a pasted token that is not one: the gateway refuses it with 401', async () => {
    const pasted = await tryIt('get-scoped', { tokenSource: 'pasted', bearer: 'not.a.token' });
    assert.equal(pasted.status, 401);
  });

  test('the authorization start asks for the registered callback, then offers an S256 authorize link', async () => {
    await client.get(apiPage);
    const start = () => client.post(`${apiPage}/authorize`, { operation: 'get-scoped', app: appId, scope: 'read' });
    const unregistered = await start();
    assert.equal(unregistered.status, 400);
    const callback = `${o.p.t.platform.urls.portal}/oauth/callback`;
    assert.ok(unregistered.text.includes(`Add ${callback} to the redirect URIs of App`), unregistered.text);
    await client.get(`/apps/${appId}`);
    const saved = await client.post(`/apps/${appId}/redirect-uris`, {
      redirect_uris: `${o.redirectUri}\n${callback}`,
    });
    assert.equal(saved.status, 303);
    await client.get(apiPage);
    const page = await start();
    assert.equal(page.status, 200);
    const link = new URL(/id="authorize-link" href="([^"]+)"/.exec(page.text)![1].replace(/&amp;/g, '&'));
    assert.equal(`${link.origin}${link.pathname}`, `${o.issuer}/oauth2/authorize`);
    assert.equal(link.searchParams.get('redirect_uri'), callback);
    assert.equal(link.searchParams.get('code_challenge_method'), 'S256');
    assert.match(link.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.match(link.searchParams.get('state')!, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(link.searchParams.get('scope'), 'read');
  });

  test('a callback whose state is not the one the session started is refused and redeems nothing', async () => {
    await client.get(apiPage);
    await client.post(`${apiPage}/authorize`, { operation: 'get-scoped', app: appId, scope: 'read' });
    const forged = await client.get('/oauth/callback?code=attacker-code&state=not-the-state');
    assert.equal(forged.status, 400);
    assert.match(forged.text, /the state does not match/);
    const missing = await client.get('/oauth/callback?code=attacker-code');
    assert.equal(missing.status, 400);
    // No token was kept: Try it still has none from signing in.
    const none = await tryIt('get-scoped', { tokenSource: 'session' });
    assert.match(none.error ?? '', /No token from signing in/);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
    });
    after(() => browser.close());

    test('authorization code + PKCE: consent page as alice, back to the API page, the call answers 200', async () => {
      const portal = o.p.t.platform.urls.portal!;
      await o.p.t.platform.gateway!.reload(); // the callback URI registered above, seen by the gateway
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${portal}/sign-in`);
      await page.getByLabel('Email').fill(o.app.email);
      await page.getByLabel('Password').fill('dev-pass-1234');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.goto(`${portal}${apiPage}#get-scoped`);
      const section = page.locator('section#get-scoped');
      await section.getByLabel(/^read/).check();
      await section.getByRole('button', { name: 'Sign in and authorize' }).click();
      await page.getByRole('link', { name: 'Continue to Demo OAuth' }).click();
      await page.getByRole('heading', { name: /wants to access your account/ }).waitFor();
      await page.getByLabel('User name').fill('alice');
      await page.getByLabel('Password').fill('wonderland');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(`${portal}${apiPage}#get-scoped`);
      const fromSignIn = section.getByLabel(/The token you got by signing in/);
      assert.equal(await fromSignIn.isChecked(), true);
      assert.match((await fromSignIn.locator('xpath=..').innerText()) ?? '', /scope read/);
      await section.getByLabel(/^n /).fill('1');
      await section.getByRole('button', { name: 'Send' }).click();
      const status = section.locator('.tryit-result .status-line');
      await status.waitFor({ timeout: 20_000 });
      assert.match(await status.innerText(), /^Code: 200 /);
      assert.match(
        await section.locator('.tryit-token').innerText(),
        /Access token \(authorization code\): scope read/,
      );
      assert.deepEqual(await seriousAccessibilityFindings(page), []);
      await context.close();
    });
  });
});
