/**
 * The native provider's authorize endpoint as a resource owner meets it: in Debian's Chromium, on
 * a desktop and on a phone (375 px, mobile viewport), the sign-in and consent page and the page
 * for a request that cannot go back to its client have no serious axe-core findings and fit the
 * screen; the owner signs in and allows with the page's own form, and the browser arrives at the
 * client's redirect URI with a code and the state; a wrong password shows the error on the page.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { assertFitsScreen, launchChromium, screenPage, screenshot } from '../helpers/browser.ts';
import { startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

let o: OAuthPlatform;
let browser: Browser;

before(async () => {
  o = await startOAuthPlatform();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await o?.close();
});

const authorizeUrl = (fields: Record<string, string>) => `${o.issuer}/oauth2/authorize?${new URLSearchParams(fields)}`;

for (const width of [1280, 375]) {
  test(`at ${width} px: sign in and allow; a wrong password; a request that cannot go back`, async () => {
    const { context, page, refusedByCsp } = await screenPage(browser, width);
    const request = {
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: o.redirectUri,
      scope: 'read',
      state: `st-${width}`,
    };
    await page.goto(authorizeUrl(request));
    await page.getByRole('heading', { level: 1 }).waitFor();
    await assertFitsScreen(page, width, 'consent page');

    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('not-her-password');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('alert').waitFor();
    await assertFitsScreen(page, width, 'consent page with an error');

    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('Password').fill('wonderland');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(o.redirectUri));
    const back = new URL(page.url());
    assert.match(back.searchParams.get('code') ?? '', /.{16,}/);
    assert.equal(back.searchParams.get('state'), `st-${width}`);

    await page.goto(authorizeUrl({ ...request, redirect_uri: 'https://elsewhere.example/cb' }));
    await page.getByRole('heading', { name: 'Authorization failed' }).waitFor();
    await assertFitsScreen(page, width, 'error page');
    await screenshot(page, `oauth-error-${width}`);
    assert.deepEqual(refusedByCsp, []);
    await context.close();
  });
}
