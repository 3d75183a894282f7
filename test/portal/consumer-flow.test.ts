/**
 * The consumer flow of spec §4.5 in Debian's Chromium against the real demo platform: anonymous
 * visitors see only Inventory; a new developer signs up and sees Accessories; creates apps
 * (secret shown once); Silver is active at once, Gold waits for the provider's approval in the
 * console; Try it relays to the gateway. Main pages are checked with axe-core and screenshotted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { demo } from '../../src/cli/demo.ts';
import {
  consoleSignIn,
  createApp,
  launchChromium,
  screenPage,
  screenshot,
  seriousAccessibilityFindings,
  signIn,
  signUp,
  startPortalDemo,
  subscribe,
} from '../helpers/browser.ts';
import type { CreatedApp, RunningDemo } from '../helpers/browser.ts';

let running: RunningDemo;
let browser: Browser;
let developer: BrowserContext;
let page: Page;
let provider: BrowserContext;
let consolePage: Page;
let silverApp: CreatedApp;
let goldApp: CreatedApp;

const newDeveloper = {
  email: `dev-${Date.now()}@example.org`,
  password: 'flow-password-42',
  name: 'Flo Tester',
  orgTitle: 'Flow Testers',
};
const logisticsPage = () => `${running.portal}/products/accessories/1.0.0/apis/logistics/2.0.0`;

async function assertAccessible(target: Page, name: string): Promise<void> {
  const findings = await seriousAccessibilityFindings(target);
  assert.deepEqual(findings, [], `${name}: serious or critical axe-core findings`);
  await screenshot(target, name);
}

/** Calls the gateway as an app until `expected` answers (the snapshot reloads off the request path). */
async function gatewayStatus(clientId: string, expected: number): Promise<number> {
  let status = 0;
  for (let i = 0; i < 50; i++) {
    const answer = await fetch(`${running.gateway}/demo/sandbox/logistics/shipping?zip=90210`, {
      headers: { 'X-IBM-Client-Id': clientId },
    });
    await answer.arrayBuffer();
    status = answer.status;
    if (status === expected) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}

before(async () => {
  running = await startPortalDemo();
  browser = await launchChromium();
  developer = await browser.newContext();
  page = await developer.newPage();
  provider = await browser.newContext();
  consolePage = await provider.newPage();
});

after(async () => {
  await browser?.close();
  await running?.close();
});

test('anonymous visitors see only the Inventory product', async () => {
  await page.goto(`${running.portal}/products`);
  const titles = await page.locator('ul.cards h2').allTextContents();
  assert.deepEqual(titles, ['Inventory']);
  const accessories = await page.goto(`${running.portal}/products/accessories/1.0.0`);
  assert.equal(accessories?.status(), 404);
  await page.goto(running.portal);
  await assertAccessible(page, 'portal-home-anonymous');
});

test('a new developer signs up and then sees Accessories 1.0.0 too', async () => {
  await signUp(page, running, newDeveloper);
  await page.goto(`${running.portal}/products`);
  const titles = await page.locator('ul.cards h2').allTextContents();
  assert.deepEqual(titles, ['Accessories', 'Inventory', 'Warehouse']);
  await page.goto(running.portal);
  await assertAccessible(page, 'portal-home-signed-in');
});

test('the product page lists the APIs and the plans with their limits in words', async () => {
  await page.goto(`${running.portal}/products/accessories/1.0.0`);
  const plans = page.locator('li.card.plan');
  const silver = plans.filter({ hasText: 'Silver' });
  const gold = plans.filter({ hasText: 'Gold' });
  assert.match(await silver.innerText(), /100 requests per hour[\s\S]*No approval needed/);
  assert.match(await gold.innerText(), /Unlimited[\s\S]*Approval required/);
  assert.equal(await page.getByRole('link', { name: 'logistics 2.0.0' }).count(), 1);
  assert.equal(await page.getByRole('link', { name: 'financing 1.0.0' }).count(), 1);
  await assertAccessible(page, 'portal-product-accessories');
});

test('creating an app shows its client secret once', async () => {
  silverApp = await createApp(page, running.portal, 'Flow Silver App', 'Silver plan app');
  assert.match(silverApp.clientId, /^[0-9a-f]{32}$/);
  assert.ok(silverApp.clientSecret.length >= 32, 'a long secret is shown');
  assert.match(await page.locator('.notice.warn').innerText(), /shown only this once/);
  await page.goto(silverApp.url);
  assert.equal(
    (await page.content()).includes(silverApp.clientSecret),
    false,
    'the app page does not show the secret again',
  );
  assert.equal(await page.getByText(silverApp.clientId).count(), 1);
});

test('subscribing to Silver is active at once and the app can call the gateway', async () => {
  assert.equal(
    await subscribe(page, running.portal, {
      product: 'accessories',
      version: '1.0.0',
      planTitle: 'Silver',
      appTitle: 'Flow Silver App',
    }),
    'Active',
  );
  assert.equal(await gatewayStatus(silverApp.clientId, 200), 200);
  await page.getByRole('link', { name: 'Done' }).click();
  assert.match(await page.locator('table').filter({ hasText: 'Accessories' }).innerText(), /Silver\s+Active/);
});

test('an app cannot subscribe twice to the same product', async () => {
  await page.goto(
    `${running.portal}/products/accessories/1.0.0/subscribe/review?plan=gold&app=${encodeURIComponent(silverApp.id)}`,
  );
  await page.getByRole('button', { name: 'Next' }).click();
  assert.match(await page.getByRole('alert').innerText(), /already subscribed to Accessories \(Silver, active\)/);
});

test('Gold on another app is pending until the provider approves it in the console', async () => {
  goldApp = await createApp(page, running.portal, 'Flow Gold App');
  assert.equal(
    await subscribe(page, running.portal, {
      product: 'accessories',
      version: '1.0.0',
      planTitle: 'Gold',
      appTitle: 'Flow Gold App',
    }),
    'Pending approval',
  );
  assert.equal(await gatewayStatus(goldApp.clientId, 401), 401, 'a pending subscription does not admit calls');
  await page.goto(goldApp.url);
  assert.match(await page.locator('table').filter({ hasText: 'Accessories' }).innerText(), /Gold\s+Pending approval/);
  await assertAccessible(page, 'portal-app-pending');

  await consoleSignIn(consolePage, running.management, demo.provider.username, demo.provider.password);
  await assertAccessible(consolePage, 'console-home');
  await consolePage
    .getByRole('link', { name: /^Approvals/ })
    .first()
    .click();
  const request = consolePage.locator('tr').filter({ hasText: 'Flow Gold App' });
  assert.match(await request.innerText(), /Flow Testers[\s\S]*Flow Gold App[\s\S]*Accessories 1\.0\.0[\s\S]*Gold/);
  await assertAccessible(consolePage, 'console-approvals');
  consolePage.once('dialog', (dialog) => void dialog.accept());
  await request.getByRole('button', { name: 'Approve' }).click();
  await consolePage.getByText('No requests are waiting.').waitFor();

  await page.goto(goldApp.url);
  assert.match(await page.locator('table').filter({ hasText: 'Accessories' }).innerText(), /Gold\s+Active/);
  assert.equal(await gatewayStatus(goldApp.clientId, 200), 200);
});

/** An operation's section on an API page, opened (operations start collapsed). */
async function openOperation(operationHeading: RegExp) {
  const section = page
    .locator('section.operation')
    .filter({ has: page.getByRole('heading', { name: operationHeading }) });
  await section.locator('summary').click();
  await section.getByRole('button', { name: 'Send' }).waitFor();
  return section;
}

async function tryIt(operationHeading: RegExp, zip: string): Promise<{ status: string; body: string }> {
  const section = await openOperation(operationHeading);
  await section.getByLabel('Application').selectOption({ label: 'Flow Silver App' });
  assert.equal(await section.getByLabel('Client ID').inputValue(), silverApp.clientId);
  await section.getByLabel(/^zip/).fill(zip);
  await section.getByRole('button', { name: 'Send' }).click();
  const body = section.locator('.tryit-result pre.tryit-body');
  await body.waitFor({ timeout: 20_000 });
  return {
    status: await section.locator('.tryit-result .status-line').innerText(),
    body: await body.innerText(),
  };
}

test('Try it on GET /shipping and GET /stores answers 200 with a body', async () => {
  await page.goto(logisticsPage());
  const shipping = await tryIt(/GET \/shipping/, '90210');
  assert.match(shipping.status, /^Code: 200 OK/);
  const rates = JSON.parse(shipping.body) as { xyz: { next_day: string }; cek: { ground: string } };
  assert.match(rates.xyz.next_day, /^\d+\.\d{2}$/);
  assert.match(rates.cek.ground, /^\d+\.\d{2}$/);
  const stores = await tryIt(/GET \/stores/, '90210');
  assert.match(stores.status, /^Code: 200 OK/);
  assert.match((JSON.parse(stores.body) as { maps_link: string }).maps_link, /\?q=-?\d+(\.\d+)?,-?\d+(\.\d+)?$/);
  await assertAccessible(page, 'portal-api-logistics');
});

test('Try it on GET /calculate shows what the gateway answers', async () => {
  const direct = await fetch(`${running.gateway}/demo/sandbox/financing/calculate?amount=10000&duration=36&rate=5`, {
    headers: { 'X-IBM-Client-Id': silverApp.clientId },
  });
  const directBody = await direct.text();
  await page.goto(`${running.portal}/products/accessories/1.0.0/apis/financing/1.0.0`);
  const section = await openOperation(/GET \/calculate/);
  await section.getByLabel('Application').selectOption({ label: 'Flow Silver App' });
  await section.getByLabel(/^amount/).fill('10000');
  await section.getByLabel(/^duration/).fill('36');
  await section.getByLabel(/^rate/).fill('5');
  await section.getByRole('button', { name: 'Send' }).click();
  const status = section.locator('.tryit-result .status-line');
  await status.waitFor({ timeout: 20_000 });
  assert.match(await status.innerText(), new RegExp(`^Code: ${direct.status} `));
  if (direct.status === 200) {
    assert.equal((JSON.parse(directBody) as { paymentAmount: number }).paymentAmount, 299.71);
    assert.match(await section.locator('pre.tryit-body').innerText(), /"paymentAmount": 299\.71/);
  }
});

test('the demo developer signs in and sees Demo App subscribed to Gold', async () => {
  const other = await browser.newContext();
  const demoPage = await other.newPage();
  await signIn(demoPage, running.portal, demo.developer.email, demo.developer.password);
  await demoPage.goto(`${running.portal}/apps`);
  assert.match(await demoPage.locator('tr').filter({ hasText: 'Demo App' }).innerText(), /Accessories · Gold\s*Active/);
  await other.close();
});

test('the console shows analytics with charts and the payload of a logged call', async () => {
  await consolePage.goto(`${running.management}/console/analytics?range=1h`);
  assert.ok(
    (await consolePage.locator('svg.chart').count()) >= 7,
    'calls over time, five dimensions and latency are charts',
  );
  const byApi = await consolePage
    .locator('section.panel')
    .filter({ hasText: 'Calls by API' })
    .locator('svg')
    .getAttribute('aria-labelledby');
  assert.ok(byApi);
  assert.match(
    (await consolePage.locator(`[id="${byApi.split(' ')[1]}"]`).textContent()) ?? '',
    /logistics: \d+ calls/,
  );
  await assertAccessible(consolePage, 'console-analytics');
  await consolePage.getByRole('link', { name: 'Request and response' }).first().click();
  const response = consolePage
    .locator('section')
    .filter({ has: consolePage.getByRole('heading', { name: 'Response' }) });
  assert.match(await response.innerText(), /"(xyz|maps_link)"/);
  await screenshot(consolePage, 'console-call-payload');
});

test('the console shows the logistics assembly as a tree and product lifecycle actions', async () => {
  await consolePage.goto(`${running.management}/console/apis/logistics/2.0.0`);
  const flow = consolePage.locator('.flow').first();
  assert.match(
    await flow.innerText(),
    /operation-switch[\s\S]*operations: shipping\.calc[\s\S]*invoke_xyz[\s\S]*operations: get\.stores/,
  );
  await assertAccessible(consolePage, 'console-api-logistics');
  await consolePage.goto(`${running.management}/console/products`);
  const inventory = consolePage.locator('section.panel').filter({ hasText: 'Inventory' });
  assert.equal(await inventory.getByRole('button', { name: 'Deprecate' }).count(), 1);
  await assertAccessible(consolePage, 'console-products');
});

test('pages fit a phone-width screen', async () => {
  const { context: phone, page: small } = await screenPage(browser, 375, 740);
  for (const path of ['/', '/products/inventory/1.0.0', '/sign-in']) {
    await small.goto(`${running.portal}${path}`);
    const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px`);
  }
  await screenshot(small, 'portal-sign-in-phone');
  await phone.close();
});
