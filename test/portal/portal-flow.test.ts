/**
 * Issue 16 (items 1–3) in Debian's Chromium against the real demo platform: a new developer
 * subscribes from a plan with no app, creates the app inside the wizard and lands on the review
 * where they were; every POST answers with a redirect, so a reload repeats nothing; Try it calls
 * show in the subscription's usage; the console keeps two orgs' apps named "Walker Shop" apart.
 * Every page of the walk is checked with axe-core at 1280 px and 375 px.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { demo } from '../../src/cli/demo.ts';
import {
  consoleSignIn,
  launchChromium,
  seriousAccessibilityFindings,
  signUp,
  startPortalDemo,
} from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';

let running: RunningDemo;
let browser: Browser;
let page: Page;

const stamp = Date.now();
const developerA = {
  email: `walker-a-${stamp}@example.org`,
  password: 'walker-password-1',
  name: 'Ada Walker',
  orgTitle: 'Walker Org A',
};
const developerB = {
  email: `walker-b-${stamp}@example.org`,
  password: 'walker-password-2',
  name: 'Bo Walker',
  orgTitle: 'Walker Org B',
};
const productUrl = () => `${running.portal}/products/accessories/1.0.0`;
const logisticsPage = () => `${productUrl()}/apis/logistics/2.0.0`;
let subscriptionUrl = '';

/** axe-core at desktop and phone widths: no serious or critical finding. */
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

/** The number of rows of the developer's app list. */
async function appCount(target: Page): Promise<number> {
  await target.goto(`${running.portal}/apps`);
  return target.locator('table tbody tr').count();
}

/** Reloads the page the last POST redirected to; the answer must be a plain GET of the same page. */
async function reload(target: Page): Promise<void> {
  const before = target.url();
  const answer = await target.reload();
  assert.equal(answer?.request().method(), 'GET');
  assert.equal(target.url(), before);
}

/** Subscribes from the product page with no app: the app is created inside the wizard. */
async function subscribeWithNewApp(target: Page, appTitle: string): Promise<void> {
  await target.goto(productUrl());
  await target.getByRole('link', { name: 'Subscribe to the Silver plan' }).click();
  await target.getByRole('heading', { name: 'Create an app' }).waitFor();
  await target.getByLabel('Title').fill(appTitle);
  await target.getByRole('button', { name: 'Create app and continue' }).click();
  await target.getByRole('heading', { name: 'Review the subscription' }).waitFor();
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

test('issue-16: Subscribe with no app creates the app inside the wizard and continues to the review', async () => {
  await signUp(page, running, developerA);
  await page.goto(productUrl());
  await page.getByRole('link', { name: 'Subscribe to the Silver plan' }).click();
  await page.getByRole('heading', { name: 'Create an app' }).waitFor();
  await assertAccessible(page, 'subscribe: create an app');
  await page.getByLabel('Title').fill('Walker Shop');
  await page.getByRole('button', { name: 'Create app and continue' }).click();
  await page.getByRole('heading', { name: 'Review the subscription' }).waitFor();
  // The product and plan came through the session: the review's URL carries neither, nor the secret.
  assert.match(page.url(), /\/products\/accessories\/1\.0\.0\/subscribe\/review$/);
  const facts = await page.locator('dl.facts').innerText();
  assert.match(facts, /Accessories 1\.0\.0/);
  assert.match(facts, /Silver/);
  assert.match(facts, /Walker Shop/);
  const secret = await page.getByLabel('Client secret', { exact: true }).inputValue();
  assert.ok(secret.length >= 20, 'the secret is shown once on the review');
  assert.ok(!page.url().includes(secret));
  await assertAccessible(page, 'subscribe: review with the new app');

  await reload(page);
  await page.getByRole('heading', { name: 'Review the subscription' }).waitFor();
  assert.equal(
    await page.getByLabel('Client secret', { exact: true }).count(),
    0,
    'a reload does not show the secret again',
  );
  assert.match(await page.locator('dl.facts').innerText(), /Walker Shop/, 'a reload keeps the wizard where it was');

  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByRole('heading', { name: 'Subscription summary' }).waitFor();
  assert.equal((await page.locator('dl.facts .pill').first().innerText()).trim(), 'Active');
  subscriptionUrl = page.url();
  await reload(page);
  await page.getByRole('heading', { name: 'Subscription summary' }).waitFor();
  await assertAccessible(page, 'subscription summary with usage');

  assert.equal(await appCount(page), 1, 'one app after the reloads');
  await page.goto(productUrl());
  assert.equal(
    await page.locator('h2:has-text("Your subscriptions") + ul li').count(),
    1,
    'one subscription after the reloads',
  );
});

test('issue-16: creating an app, adding credentials and resetting a secret redirect; reloading repeats none of them', async () => {
  await page.goto(`${running.portal}/apps/new`);
  await assertAccessible(page, 'create an app');
  await page.getByLabel('Title').fill('Second Shop');
  await page.getByRole('button', { name: 'Submit' }).click();
  await page.getByRole('heading', { name: 'Second Shop' }).waitFor();
  assert.match(page.url(), /\/apps\/[^/?]+$/);
  const firstSecret = await page.getByLabel('Client secret', { exact: true }).inputValue();
  await assertAccessible(page, 'app page with the secret shown once');
  await reload(page);
  assert.equal(await page.getByLabel('Client secret', { exact: true }).count(), 0, 'the secret is shown once');
  const appUrl = page.url();
  assert.equal(await appCount(page), 2);

  await page.goto(appUrl);
  await page.getByRole('button', { name: 'Add credentials' }).click();
  await page.getByRole('heading', { name: 'New credentials added' }).waitFor();
  assert.equal(page.url(), appUrl);
  await reload(page);
  assert.equal(await page.locator('table').first().locator('tbody tr').count(), 2, 'one added pair after the reload');

  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Reset secret' }).first().click();
  await page.getByRole('heading', { name: 'New client secret' }).waitFor();
  const resetSecret = await page.getByLabel('Client secret', { exact: true }).inputValue();
  assert.notEqual(resetSecret, firstSecret);
  await reload(page);
  assert.equal(
    await page.getByLabel('Client secret', { exact: true }).count(),
    0,
    'a reload does not reset the secret again',
  );
  assert.equal(await appCount(page), 2);
});

test("issue-16: Try it calls show in the subscription's usage: used and left of 100 per hour, and in the chart", async () => {
  await page.goto(logisticsPage());
  const section = page
    .locator('section.operation')
    .filter({ has: page.getByRole('heading', { name: /GET \/shipping/ }) });
  for (let i = 0; i < 3; i++) {
    // Operations start collapsed (issue 16, API pages): open this one.
    await section.locator('summary').click();
    await section.getByRole('button', { name: 'Send' }).waitFor();
    await section.getByLabel('Application').selectOption({ label: 'Walker Shop' });
    await section.getByLabel(/^zip/).fill('90210');
    await section.getByRole('button', { name: 'Send' }).click();
    await section.locator('.tryit-result .status-line').filter({ hasText: 'Code: 200' }).waitFor({ timeout: 20_000 });
    await page.goto(logisticsPage());
  }
  // The gateway's activity log is written in batches; the usage shows once the batch is stored.
  let row = '';
  for (let i = 0; i < 50 && !/\b3\s+97\b/.test(row); i++) {
    await page.goto(subscriptionUrl);
    row = await page.locator('#usage ~ .table-wrap tbody tr').first().innerText();
    if (!/\b3\s+97\b/.test(row)) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match(row, /100 requests per hour/);
  assert.match(row, /\b3\s+97\b/, 'used 3, left 97');
  assert.match(
    ((await page.locator('section[aria-labelledby="usage"] svg desc').textContent()) ?? '').trim(),
    /^3 calls, 0 errors/,
  );
  await page.getByRole('link', { name: 'Last 7 days' }).click();
  assert.match((await page.locator('section[aria-labelledby="usage"] svg title').textContent()) ?? '', /last 7 days/);
  assert.match((await page.locator('section[aria-labelledby="usage"] svg desc').textContent()) ?? '', /^3 calls/);
  await assertAccessible(page, 'subscription usage, 7 days');
  await page.goto(`${running.portal}/apps`);
  await page.getByRole('link', { name: 'Walker Shop' }).click();
  assert.match(
    await page.getByRole('link', { name: /3 of 100 requests per hour used, 97 left/ }).innerText(),
    /97 left/,
  );
});

test('issue-16: the console counts two orgs\' apps named "Walker Shop" apart, labelled with their org', async () => {
  const other = await (await browser.newContext()).newPage();
  await signUp(other, running, developerB);
  await subscribeWithNewApp(other, 'Walker Shop');
  await other.getByRole('button', { name: 'Next' }).click();
  await other.getByRole('heading', { name: 'Subscription summary' }).waitFor();
  await other.goto(`${running.portal}/apps`);
  await other.getByRole('link', { name: 'Walker Shop' }).click();
  const clientId = await other.locator('table').first().locator('code').first().innerText();
  for (let i = 0; i < 2; i++) {
    const answer = await fetch(`${running.gateway}/demo/sandbox/logistics/shipping?zip=90210`, {
      headers: { 'X-IBM-Client-Id': clientId },
    });
    assert.equal(answer.status, 200);
    await answer.arrayBuffer();
  }
  const consolePage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await consoleSignIn(consolePage, running.management, demo.provider.username, demo.provider.password);
  let byApp = '';
  for (let i = 0; i < 50 && !/: 2 calls/.test(byApp); i++) {
    await consolePage.goto(`${running.management}/console/analytics?range=1h`);
    byApp = (await consolePage.locator('section[aria-labelledby="d-app_id"] svg desc').textContent()) ?? '';
    if (!/: 2 calls/.test(byApp)) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const walkers = [...byApp.matchAll(/Walker Shop \(([^)]+)\): (\d+) calls/g)].map((m) => [m[1], Number(m[2])]);
  assert.equal(walkers.length, 2, `two bars for the two "Walker Shop" apps: ${byApp}`);
  assert.notEqual(walkers[0][0], walkers[1][0], 'each labelled with its own org');
  assert.deepEqual(walkers.map(([, calls]) => calls).sort(), [2, 3]);
  assert.match(
    (await consolePage.locator('section[aria-labelledby="d-plan_id"] svg desc').textContent()) ?? '',
    /silver \(accessories\): 5 calls/,
  );
  await assertAccessible(consolePage, 'console analytics');
});
