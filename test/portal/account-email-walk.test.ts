/**
 * Issue 16 item 5 in Chromium against the demo, with the link read from its real SMTP sink:
 * a new developer, unverified, sees only public products and is refused an app (so a
 * subscription); the emailed link opens the authenticated products, apps and the subscription; "Forgot password?"
 * sets a new password and ends every other session. Every page of the walk passes axe at
 * 1280 px and 375 px. With PORTICO_SCREENSHOTS=<dir> (scripts/screenshots.js) the walk also
 * saves the main pages at 1280 px there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { demo } from '../../src/cli/demo.ts';
import {
  consoleSignIn,
  createApp,
  launchChromium,
  seriousAccessibilityFindings,
  signIn,
  signUpUnverified,
  startPortalDemo,
  subscribe,
} from '../helpers/browser.ts';
import type { CreatedApp, RunningDemo } from '../helpers/browser.ts';
import { linkIn, verificationLink, waitForMail } from '../helpers/mail.ts';

let running: RunningDemo;
let browser: Browser;
let page: Page;
const stamp = Date.now();
const developer = {
  email: `mailwalk-${stamp}@example.org`,
  password: 'mailwalk-pass-1',
  name: 'Mia Walker',
  orgTitle: 'Mail Walkers',
};
let app: CreatedApp;
let subscriptionUrl = '';

async function assertAccessible(target: Page, name: string): Promise<void> {
  for (const width of [1280, 375]) {
    await target.setViewportSize({ width, height: 900 });
    assert.deepEqual(
      await seriousAccessibilityFindings(target),
      [],
      `${name} at ${width} px: serious or critical axe-core findings`,
    );
  }
  await target.setViewportSize({ width: 1280, height: 900 });
}

async function productTitles(target: Page): Promise<string[]> {
  await target.goto(`${running.portal}/products`);
  return target.locator('ul.cards h2').allTextContents();
}

before(async () => {
  running = await startPortalDemo();
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
});

after(async () => {
  await browser?.close();
  await running?.close();
});

test('issue-16: a new developer, unverified, sees only public products and the "check your email" banner', async () => {
  await signUpUnverified(page, running.portal, developer);
  assert.deepEqual(await productTitles(page), ['Inventory']);
  assert.match(await page.locator('.notice.warn').innerText(), /Check your email: open the link we sent to/);
  assert.equal(await page.getByRole('button', { name: 'Send the link again' }).count(), 1);
  await assertAccessible(page, 'products-unverified');
});

test('issue-16: an unverified developer cannot create an app, so cannot subscribe, even to a public product', async () => {
  await page.goto(`${running.portal}/apps/new`);
  await page.getByLabel('Title').fill('Mail Walk App');
  await page.getByRole('button', { name: 'Submit' }).click();
  assert.match(await page.getByRole('alert').innerText(), /Verify your email address first/);
  await page.goto(`${running.portal}/products/inventory/1.0.0`);
  await page
    .getByRole('link', { name: /^Subscribe to the .* plan$/ })
    .first()
    .click();
  await page.getByLabel('Title').fill('Mail Walk App');
  await page.getByRole('button', { name: 'Create app and continue' }).click();
  assert.match(await page.getByRole('alert').innerText(), /Verify your email address first/);
  await assertAccessible(page, 'create-app-unverified');
});

test('issue-16: the link from the SMTP sink verifies the address; Accessories appears and Silver subscribes', async () => {
  const message = await waitForMail(running.mail, developer.email, /Verify your email address/);
  assert.match(message.text, /expires in 24 hours/);
  await page.goto(await verificationLink(running.mail, developer.email));
  await page.getByRole('heading', { name: 'Email address verified' }).waitFor();
  assert.equal(await page.locator('.notice.warn').count(), 0, 'the banner is gone');
  await assertAccessible(page, 'email-verified');
  assert.deepEqual(await productTitles(page), ['Accessories', 'Inventory', 'Warehouse']);
  app = await createApp(page, running.portal, 'Mail Walk App');
  const state = await subscribe(page, running.portal, {
    product: 'accessories',
    version: '1.0.0',
    planTitle: 'Silver',
    appTitle: 'Mail Walk App',
  });
  assert.equal(state, 'Active');
  subscriptionUrl = page.url();
  for (let i = 0; i < 3; i++) {
    const call = await fetch(`${running.gateway}/${demo.org}/${demo.catalog}/logistics/shipping?zip=90210`, {
      headers: { 'X-IBM-Client-Id': app.clientId },
    });
    assert.equal(call.status, 200);
  }
});

test('issue-16: "Forgot password?" → emailed link → new password; the old one is refused and other sessions end', async () => {
  const other = await (await browser.newContext()).newPage();
  await signIn(other, running.portal, developer.email, developer.password);
  const anonymous = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await anonymous.goto(`${running.portal}/sign-in`);
  await anonymous.getByRole('link', { name: 'Forgot password?' }).click();
  await assertAccessible(anonymous, 'forgot-password');
  await anonymous.getByLabel('Email').fill(developer.email);
  await anonymous.getByRole('button', { name: 'Email me a link' }).click();
  assert.match(await anonymous.getByRole('status').innerText(), /If an account uses this address, we sent it a link/);

  const mail = await waitForMail(running.mail, developer.email, /Reset your password/);
  await anonymous.goto(linkIn(mail, '/reset-password?token='));
  await assertAccessible(anonymous, 'reset-password');
  await anonymous.getByLabel('New password').fill('mailwalk-newpass-2');
  await anonymous.getByRole('button', { name: 'Set password' }).click();
  await anonymous.waitForURL(/\/sign-in\?reset=1$/);
  assert.match(await anonymous.getByRole('status').first().innerText(), /every session of your account was signed out/);

  for (const target of [page, other]) {
    await target.goto(`${running.portal}/apps`);
    assert.match(target.url(), /\/sign-in\?next=/, 'the session ended');
  }
  await anonymous.getByLabel('Email').fill(developer.email);
  await anonymous.getByLabel('Password').fill(developer.password);
  await anonymous.getByRole('button', { name: 'Sign in' }).click();
  assert.match(await anonymous.getByRole('alert').innerText(), /Wrong email or password/);
  await signIn(page, running.portal, developer.email, 'mailwalk-newpass-2');
  await anonymous.goto(linkIn(mail, '/reset-password?token='));
  assert.match(await anonymous.locator('h1').innerText(), /This link does not work/);
});

test('screenshots of the main pages at 1280 px (when PORTICO_SCREENSHOTS names a folder)', async (t) => {
  const dir = process.env.PORTICO_SCREENSHOTS;
  await page.setViewportSize({ width: 1280, height: 900 });
  const shots: Array<[string, string]> = [
    ['portal-products', `${running.portal}/products`],
    ['portal-api-page', `${running.portal}/products/accessories/1.0.0/apis/logistics/2.0.0`],
    ['portal-app', app.url],
    ['portal-usage', subscriptionUrl],
  ];
  for (const [name, url] of shots) {
    const answer = await page.goto(url);
    assert.equal(answer?.status(), 200, name);
    if (dir) {
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, `${name}.png`) });
    }
  }
  const consolePage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await consoleSignIn(consolePage, running.management, demo.provider.username, demo.provider.password);
  assert.equal((await consolePage.goto(`${running.management}/console/analytics`))?.status(), 200);
  if (dir) await consolePage.screenshot({ path: join(dir, 'console-analytics.png') });
  else t.diagnostic('PORTICO_SCREENSHOTS not set: pages checked, no files written');
});
