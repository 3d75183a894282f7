/**
 * The acceptance test: `portico demo` as a child process on free ports, walked through every
 * numbered point of the Accessories spec (spec §1–§9) with real HTTP and Debian's Chromium.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  consoleSignIn,
  createApp,
  launchChromium,
  screenshot,
  signIn,
  signOut,
  subscribe,
} from '../helpers/browser.ts';
import zipcodes from '../helpers/zipcodes.ts';

const bin = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));
const developer = { email: 'developer@example.com', password: 'portico-demo-1' };
const provider = { username: 'admin', password: 'portico-demo-1' };

interface Demo {
  child: ChildProcess;
  output: string;
  portal: string;
  management: string;
  gateway: string;
  clientId: string;
}

function startDemoProcess(dataDir: string): Promise<Demo> {
  const child = spawn(process.execPath, [bin, 'demo', '--data-dir', dataDir], {
    env: {
      PATH: process.env.PATH ?? '',
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_SAMPLE_PORTS: '0,0,0,0',
      PORTICO_ANALYTICS_FLUSH_MS: '100',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // The OAuth lines come last: the warehouse call is the last line printed.
      if (!/curl .*\/warehouse\/items/.test(output)) return;
      clearTimeout(timer);
      const find = (pattern: RegExp) => (pattern.exec(output) ?? [])[1] ?? '';
      resolve({
        child,
        output,
        portal: find(/developer portal\s+(http:\/\/\S+)/),
        management: find(/provider console\s+(http:\/\/\S+?)\/console/),
        gateway: find(/gateway\s+(http:\/\/\S+?)\/?$/m),
        clientId: find(/client id ([0-9a-f]{32})/),
      });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`demo exited with ${code}:\n${output}`)));
  });
}

async function json(response: Response): Promise<unknown> {
  return response.json();
}

describe('the Accessories scenario, end to end, on `portico demo`', () => {
  let dataDir: string;
  let demo: Demo;
  let browser: Browser;
  let page: Page;
  let token: string;

  const call = (path: string, clientId = demo.clientId) =>
    fetch(`${demo.gateway}${path}`, { headers: { 'X-IBM-Client-Id': clientId } });
  const manage = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${demo.management}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return {
      status: response.status,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON the API answers
      body: (await response.text().then((t) => (t ? JSON.parse(t) : undefined))) as any,
    };
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'portico-e2e-'));
    demo = await startDemoProcess(dataDir);
    const login = await fetch(`${demo.management}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(provider),
    });
    token = ((await login.json()) as { token: string }).token;
    browser = await launchChromium();
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    if (demo) {
      const exited = new Promise((resolve) => demo.child.once('exit', resolve));
      demo.child.kill('SIGINT');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the demo prints the portal, console and gateway, and curl lines that work', () => {
    assert.match(demo.portal, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(demo.management, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(demo.gateway, /^http:\/\/127\.0\.0\.1:\d+\/demo\/sandbox$/);
    assert.equal([...demo.output.matchAll(/^\s+curl /gm)].length, 6);
  });

  test('§9: API versions and base paths, product version', async () => {
    const apis = (await manage('GET', '/api/apis')).body as Array<{
      name: string;
      version: string;
      basePath: string;
      state: string;
    }>;
    const byName = Object.fromEntries(apis.map((a) => [a.name, a]));
    assert.deepEqual([byName.financing.version, byName.financing.basePath], ['1.0.0', '/financing']);
    assert.deepEqual([byName.logistics.version, byName.logistics.basePath], ['2.0.0', '/logistics']);
    const product = (await manage('GET', '/api/catalogs/sandbox/products/accessories/1.0.0')).body;
    assert.equal(product.version, '1.0.0');
    assert.deepEqual(
      product.plans.map((p: { title: string; approval: boolean }) => [p.title, p.approval]),
      [
        ['Silver', false],
        ['Gold', true],
      ],
    );
    assert.deepEqual(product.visibility, { view: 'authenticated', subscribe: 'authenticated' });
    const definition = (await manage('GET', '/api/apis/financing/1.0.0')).body.document;
    const policies = JSON.stringify(definition['x-ibm-configuration'].assembly);
    assert.equal(
      (policies.match(/"version":"2\.0\.0"/g) ?? []).length >= 3,
      true,
      'map, invoke, map declare version 2.0.0',
    );
  });

  test('§4.1: GET /financing/calculate converts REST to SOAP and back: 10000/36/5 → 299.71', async () => {
    const response = await call('/financing/calculate?amount=10000&duration=36&rate=5');
    assert.equal(response.status, 200);
    assert.deepEqual(await json(response), { paymentAmount: 299.71 });
    const missing = await call('/financing/calculate?amount=10000&duration=36');
    assert.equal(missing.status, 400);
  });

  test('§4.2: GET /logistics/shipping consolidates both vendors', async () => {
    const response = await call('/logistics/shipping?zip=90210');
    assert.equal(response.status, 200);
    assert.deepEqual(await json(response), {
      xyz: { next_day: '37.71', two_day: '25.80', ground: '19.85' },
      cek: { next_day: '34.28', two_day: '23.45', ground: '18.04' },
    });
  });

  test('§4.3: GET /logistics/stores answers maps_link from the first geocoding result', async () => {
    const response = await call('/logistics/stores?zip=90210');
    const place = zipcodes.lookup('90210')!;
    assert.deepEqual(await json(response), {
      maps_link: `https://www.google.com/maps?q=${place.latitude},${place.longitude}`,
    });
  });

  test('§1: the logistics API is imported offline and activated separately', async () => {
    const text = readFileSync(new URL('../../examples/accessories/logistics.yaml', import.meta.url), 'utf8').replace(
      'version: 2.0.0\n',
      'version: 2.0.1\n',
    );
    const imported = await manage('POST', '/api/apis', { document: text, file: 'logistics.yaml' });
    assert.equal(imported.body.state, 'offline');
    assert.equal((await manage('POST', '/api/apis/logistics/2.0.1/activate')).body.state, 'online');
    assert.equal((await manage('GET', '/api/apis/logistics/2.0.0')).body.state, 'online');
  });

  test('§1, §7: the activity log keeps the payload of a success and only activity for an error', async () => {
    const ok = await call('/logistics/shipping?zip=10001');
    const okTx = ok.headers.get('x-global-transaction-id');
    const okBody = await ok.text();
    const bad = await call('/logistics/shipping');
    const badTx = bad.headers.get('x-global-transaction-id');
    await bad.arrayBuffer();
    let events: Array<{
      tx_id: string;
      content: string;
      response_body: string | null;
      request_headers: string | null;
    }> = [];
    for (let i = 0; i < 100 && !(events.some((e) => e.tx_id === okTx) && events.some((e) => e.tx_id === badTx)); i++) {
      await new Promise((r) => setTimeout(r, 100));
      events = (await manage('GET', '/api/catalogs/sandbox/analytics/events?api=logistics&limit=50')).body;
    }
    const success = events.find((e) => e.tx_id === okTx)!;
    const failure = events.find((e) => e.tx_id === badTx)!;
    assert.equal(success.content, 'payload');
    assert.equal(success.response_body, okBody);
    assert.equal(failure.content, 'activity');
    assert.equal(failure.response_body, null);
    assert.equal(failure.request_headers, null);
  });

  test('§4.5, §5: anonymous visitors see only Inventory; the signed-in developer also sees Accessories', async () => {
    await page.goto(`${demo.portal}/products`);
    const anonymous = await page.locator('main').innerText();
    assert.match(anonymous, /Inventory/);
    assert.doesNotMatch(anonymous, /Accessories/);
    await signIn(page, demo.portal, developer.email, developer.password);
    await page.goto(`${demo.portal}/products`);
    assert.match(await page.locator('main').innerText(), /Accessories[\s\S]*1\.0\.0/);
    await screenshot(page, 'e2e-products-signed-in');
  });

  test('§8: Silver admits 100 calls in the hour and the 101st is 429', async () => {
    const app = await createApp(page, demo.portal, 'E2E Silver App');
    assert.equal(
      await subscribe(page, demo.portal, {
        product: 'accessories',
        version: '1.0.0',
        planTitle: 'Silver',
        appTitle: 'E2E Silver App',
      }),
      'Active',
    );
    for (let i = 1; i <= 100; i++) {
      const response = await call('/logistics/stores?zip=90210', app.clientId);
      assert.equal(response.status, 200, `call ${i}`);
      await response.arrayBuffer();
    }
    const over = await call('/logistics/stores?zip=90210', app.clientId);
    assert.equal(over.status, 429);
    assert.deepEqual(await json(over), {
      httpCode: '429',
      httpMessage: 'Too Many Requests',
      moreInformation: 'Rate Limit exceeded',
    });
  });

  test('§3, §8: Gold is pending until the provider approves it, then unlimited', async () => {
    const app = await createApp(page, demo.portal, 'E2E Gold App');
    assert.equal(
      await subscribe(page, demo.portal, {
        product: 'accessories',
        version: '1.0.0',
        planTitle: 'Gold',
        appTitle: 'E2E Gold App',
      }),
      'Pending approval',
    );
    const pending = await call('/logistics/shipping?zip=90210', app.clientId);
    assert.equal(pending.status, 401);
    await pending.arrayBuffer();

    const consolePage = await browser.newPage();
    await consoleSignIn(consolePage, demo.management, provider.username, provider.password);
    await consolePage
      .getByRole('link', { name: /^Approvals/ })
      .first()
      .click();
    const request = consolePage.locator('tr').filter({ hasText: 'E2E Gold App' });
    await request.getByRole('button', { name: 'Approve' }).click();
    await consolePage.getByText('No requests are waiting.').waitFor();
    await consolePage.close();

    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      const response = await call('/logistics/stores?zip=90210', app.clientId);
      status = response.status;
      await response.arrayBuffer();
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 200);
    const statuses = await Promise.all(
      Array.from({ length: 110 }, () =>
        call('/logistics/stores?zip=90210', app.clientId).then(async (r) => (await r.arrayBuffer(), r.status)),
      ),
    );
    assert.deepEqual([...new Set(statuses)], [200]);
    await page.goto(app.url);
    assert.match(await page.locator('table').filter({ hasText: 'Accessories' }).innerText(), /Gold\s+Active/);
  });

  test('§5: signing out clears the session', async () => {
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'portico_portal');
    assert.ok(session);
    await signOut(page);
    const reuse = await fetch(`${demo.portal}/apps`, {
      headers: { cookie: `portico_portal=${session.value}` },
      redirect: 'manual',
    });
    assert.notEqual(reuse.status, 200);
    await page.goto(`${demo.portal}/products`);
    assert.doesNotMatch(await page.locator('main').innerText(), /Accessories/);
  });
});
