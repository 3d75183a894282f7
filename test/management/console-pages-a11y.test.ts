/**
 * The console pages no other walk reads in a browser — the sign-in page, the APIs list, the
 * consumer organizations, the user registries and one logged call's payload — in Debian's
 * Chromium against the demo platform (with its own traffic in the analytics), at 1280 and
 * 375 px: no serious or critical axe-core findings, no sideways scroll, nothing the page's
 * Content-Security-Policy refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { demo } from '../../src/cli/demo.ts';
import {
  assertFitsScreen,
  consoleSignIn,
  launchChromium,
  screenPage,
  screenshot,
  startPortalDemo,
} from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';

let running: RunningDemo;
let browser: Browser;

before(async () => {
  running = await startPortalDemo();
  browser = await launchChromium();
  // One logged call, so that the analytics list links to a call's page.
  const answer = await fetch(`${running.gateway}/${demo.org}/${demo.catalog}/logistics/shipping?zip=90210`, {
    headers: { 'X-IBM-Client-Id': 'nobody' },
  });
  await answer.arrayBuffer();
});

after(async () => {
  await browser?.close();
  await running?.close();
});

for (const width of [1280, 375]) {
  test(`at ${width} px: console sign-in, APIs, consumers, user registries and a call's page`, async () => {
    const { context, page, refusedByCsp } = await screenPage(browser, width);
    const check = (name: string) => assertFitsScreen(page, width, name);
    await page.goto(`${running.management}/console/sign-in`);
    await check('sign-in');
    await consoleSignIn(page, running.management, demo.provider.username, demo.provider.password);
    for (const [path, heading] of [
      ['/console/apis', 'APIs'],
      ['/console/consumers', 'Consumer organizations'],
      ['/console/user-registries', 'User registries'],
    ]) {
      await page.goto(`${running.management}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      assert.match(
        (await page.getByRole('heading', { level: 1 }).first().textContent()) ?? '',
        new RegExp(heading, 'i'),
      );
      await check(path);
      if (path === '/console/apis') {
        // Each API's products, read for the whole org at once.
        const logistics = await page.getByRole('row').filter({ hasText: 'logistics:2.0.0' }).textContent();
        assert.match(logistics ?? '', /accessories:1\.0\.0/);
        const inventory = await page.getByRole('row').filter({ hasText: 'inventory:1.0.0' }).first().textContent();
        assert.match(inventory ?? '', /inventory:1\.0\.0/);
      }
    }
    await page.goto(`${running.management}/console/analytics`);
    const call = page.locator('a[href*="/console/analytics/events/"]').first();
    await call.waitFor();
    await call.click();
    await page.waitForURL(/\/console\/analytics\/events\//);
    await check('a call');
    await screenshot(page, `console-call-${width}`);
    assert.deepEqual(refusedByCsp, []);
    await context.close();
  });
}
