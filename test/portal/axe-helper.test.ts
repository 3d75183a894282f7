/**
 * The browser tests' accessibility check (test/helpers/browser.ts) reports what axe-core finds:
 * a check that found nothing on any page would pass every walk. Pages served with the portal's
 * kind of Content-Security-Policy (no inline or outside scripts), read twice in one document
 * (axe injected once), after a navigation (injected again) and with a frame (AxeBuilder's path).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, seriousAccessibilityFindings } from '../helpers/browser.ts';

const pages: Record<string, string> = {
  '/clean':
    '<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Fine</h1><p>Text.</p></main></body></html>',
  '/broken':
    '<!doctype html><html lang="en"><head><title>Broken</title></head><body><main><h1>Broken</h1>' +
    '<img src="/x.png"><button></button><p style="color:#777;background:#888">faint</p></main></body></html>',
  '/framed':
    '<!doctype html><html lang="en"><head><title>Framed</title></head><body><main><h1>Framed</h1>' +
    '<iframe src="/broken" title="inner"></iframe></main></body></html>',
};

let server: Server;
let base: string;
let browser: Browser;
let page: Page;

before(async () => {
  server = createServer((request, response) => {
    const body = pages[request.url ?? ''];
    response.writeHead(body === undefined ? 404 : 200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'; frame-src 'self'; style-src 'unsafe-inline'",
    });
    response.end(body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
});

after(async () => {
  await browser?.close();
  server?.close();
});

const ids = (findings: { id: string }[]) => findings.map((f) => f.id).sort();

test('a clean page has no serious findings', async () => {
  await page.goto(`${base}/clean`);
  assert.deepEqual(await seriousAccessibilityFindings(page), []);
});

test('a page missing alt text, a button name and contrast is reported, twice in one document and after a navigation', async () => {
  await page.goto(`${base}/broken`);
  const expected = ['button-name', 'color-contrast', 'image-alt'];
  const first = await seriousAccessibilityFindings(page);
  assert.deepEqual(ids(first), expected);
  assert.ok(first.find((f) => f.id === 'image-alt')!.nodes.includes('img'));
  assert.deepEqual(ids(await seriousAccessibilityFindings(page)), expected);
  await page.goto(`${base}/clean`);
  assert.deepEqual(await seriousAccessibilityFindings(page), []);
  await page.goto(`${base}/broken`);
  assert.deepEqual(ids(await seriousAccessibilityFindings(page)), expected);
});

test('what is wrong inside a frame is reported too', async () => {
  await page.goto(`${base}/framed`);
  await page.frameLocator('iframe').locator('h1').waitFor();
  assert.deepEqual(ids(await seriousAccessibilityFindings(page)), ['button-name', 'color-contrast', 'image-alt']);
});
