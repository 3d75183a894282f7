/**
 * API pages as developers expect them (issue 16, item 4), against the real demo platform: one
 * collapsed section per operation, curl / fetch / requests samples with the developer's client
 * id, OpenAPI downloads with the gateway as server and no provider internals, examples generated
 * from the schema, search over what the visitor may see, and a page that fits 375 px. A product
 * visible only to the partner organization `partner-x` checks that visibility holds everywhere.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import type { Browser } from 'playwright-core';
import { demo } from '../../src/cli/demo.ts';
import {
  launchChromium,
  screenPage,
  screenshot,
  seriousAccessibilityFindings,
  signIn,
  startPortalDemo,
} from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { WebClient } from '../helpers/web-client.ts';

const run = promisify(execFile);

let running: RunningDemo;
let browser: Browser;
const partner = { email: `partner-${process.pid}@partner.example`, password: 'partner-pass-123' };
const inventoryPage = '/products/inventory/1.0.0/apis/inventory/1.0.0';
const logisticsPage = '/products/accessories/1.0.0/apis/logistics/2.0.0';
const stockPage = '/products/partner-only/1.0.0/apis/partner-stock/1.0.0';
const ordersPage = '/products/partner-only/1.0.0/apis/partner-orders/1.0.0';

/** A partner-only API with provider internals, hostile texts and schemas without examples. */
const stockApi = `swagger: '2.0'
info:
  title: Partner Stock
  x-ibm-name: partner-stock
  version: 1.0.0
  description: 'Stock <script>alert("api")</script> levels'
basePath: /partner-stock
securityDefinitions:
  clientID: { type: apiKey, in: header, name: X-IBM-Client-Id }
security:
  - clientID: []
paths:
  /levels/{sku}:
    get:
      summary: 'Level of a warehouse <img src=x onerror=alert(1)>'
      operationId: level.get
      parameters:
        - { name: sku, in: path, required: true, type: string, format: uuid }
        - { name: warehouse, in: query, required: true, type: string, enum: [north, south] }
      responses:
        '200': { description: OK, schema: { $ref: '#/definitions/Level' } }
    put:
      summary: Replace a level
      operationId: level.put
      parameters:
        - { name: sku, in: path, required: true, type: string, format: uuid }
        - { name: data, in: body, required: true, schema: { $ref: '#/definitions/Level' } }
      responses:
        '200': { description: OK, schema: { $ref: '#/definitions/Level' } }
definitions:
  Level:
    type: object
    properties:
      sku: { type: string, format: uuid }
      count: { type: integer, minimum: 0, maximum: 500 }
      price: { type: number, minimum: 20 }
      updated: { type: string, format: date-time }
      tags: { type: array, minItems: 2, items: { type: string, maxLength: 11 } }
      state: { type: string, enum: [in-stock, sold-out] }
      warehouse: { $ref: '#/definitions/Warehouse' }
  Warehouse:
    type: object
    properties:
      code: { type: string, maxLength: 4 }
      contact: { type: string, format: email }
x-ibm-configuration:
  type: rest
  enforced: true
  testable: true
  properties:
    stock_backend:
      value: 'http://10.9.8.7:9999/internal-stock?key=s3cr3t-backend-key'
      description: Where stock lives
  catalogs:
    sandbox:
      properties:
        stock_backend: 'http://10.9.8.7:9999/sandbox-stock?key=s3cr3t-sandbox-key'
  assembly:
    execute:
      - invoke:
          version: 2.0.0
          title: call-internal-stock-backend
          target-url: '$(stock_backend)'
`;

const ordersApi = `openapi: 3.0.3
info:
  title: Partner Orders
  x-ibm-name: partner-orders
  version: 1.0.0
servers:
  - url: /partner-orders
components:
  securitySchemes:
    clientId: { type: apiKey, in: header, name: X-IBM-Client-Id }
security:
  - clientId: []
paths:
  /orders:
    get:
      operationId: listOrders
      responses:
        '200': { description: OK }
x-ibm-configuration:
  type: rest
  assembly:
    execute:
      - invoke: { version: 2.0.0, title: call-internal-orders, target-url: 'http://10.9.8.7:9998/orders' }
`;

const partnerProduct = `product: 1.0.0
info: { name: partner-only, title: Partner Only, version: 1.0.0, summary: Stock levels for our partner }
visibility:
  view: { type: custom, enabled: true, orgs: [partner-x] }
  subscribe: { type: custom, enabled: true, orgs: [partner-x] }
plans:
  default: { title: Default, approval: false, rate-limits: { default: { value: 100/1hour } } }
apis:
  partner-stock: { name: 'partner-stock:1.0.0' }
  partner-orders: { name: 'partner-orders:1.0.0' }
`;

async function client(who: 'anonymous' | 'developer' | 'partner'): Promise<WebClient> {
  const web = new WebClient(running.portal);
  if (who === 'developer') assert.equal(await web.signIn(demo.developer.email, demo.developer.password), 303);
  if (who === 'partner') assert.equal(await web.signIn(partner.email, partner.password), 303);
  return web;
}

/** The text of the samples on a page (HTML entities decoded as a browser would). */
function codeBlocks(page: string): string[] {
  const decode = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#96;/g, '`')
      .replace(/&amp;/g, '&');
  return [...page.matchAll(/<code id="[^"]+-sample-[a-z]+">([\s\S]*?)<\/code>/g)].map((m) => decode(m[1]));
}

before(async () => {
  running = await startPortalDemo();
  const { services } = running.handle.platform;
  const { orgId } = await services.ensureOrg(demo.org);
  await services.createConsumerOrg(orgId, demo.catalog, {
    name: 'partner-x',
    title: 'Partner X',
    owner: partner,
  });
  for (const [file, text] of [
    ['partner-stock.yaml', stockApi],
    ['partner-orders.yaml', ordersApi],
  ]) {
    const imported = await services.importApi(orgId, { text, file });
    await services.setApiState(orgId, imported.api.name, imported.api.version, 'online');
  }
  await services.putProduct(orgId, demo.catalog, {
    text: partnerProduct,
    file: 'partner-only.yaml',
    state: 'published',
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await running?.close();
});

test('each operation of the Inventory API is one collapsed <details> section', async () => {
  const page = (await (await client('anonymous')).get(inventoryPage)).text;
  assert.equal((page.match(/<section class="operation"/g) ?? []).length, 5);
  assert.equal((page.match(/<details>/g) ?? []).length, 5, 'every operation starts collapsed');
  assert.match(
    page,
    /<summary><h2 id="get-items-id-title"><span class="method get">GET<\/span> <span class="path">\/items\/\{id\}<\/span>/,
  );
});

test("signed out, the samples carry the client id placeholder; signed in, the first app's client id", async () => {
  const anonymous = codeBlocks((await (await client('anonymous')).get(inventoryPage)).text);
  assert.equal(anonymous.length, 15, 'curl, fetch and requests for each of the 5 operations');
  assert.ok(anonymous.every((code) => code.includes('YOUR_CLIENT_ID')));
  const developer = codeBlocks((await (await client('developer')).get(inventoryPage)).text);
  assert.ok(developer.every((code) => code.includes(running.handle.clientId) && !code.includes('YOUR_CLIENT_ID')));
  const [curl, fetchSample, python] = developer.slice(0, 3);
  assert.match(
    curl,
    /^curl --request GET \\\n {2}--url 'http:\/\/127\.0\.0\.1:\d+\/demo\/sandbox\/api\/items' \\\n {2}--header 'X-IBM-Client-Id: [0-9a-f]{32}'/,
  );
  assert.match(
    fetchSample,
    /^const response = await fetch\("http:\/\/127\.0\.0\.1:\d+\/demo\/sandbox\/api\/items", \{/,
  );
  assert.match(python, /^import requests\n\nresponse = requests\.request\(\n {4}"GET",/);
});

test('the curl and fetch samples, run as printed, get 200 from the gateway', async () => {
  const [curl, fetchSample] = codeBlocks((await (await client('developer')).get(inventoryPage)).text);
  const curlOut = await run('sh', ['-c', `${curl} --silent --write-out '\\n%{http_code}'`]);
  assert.match(curlOut.stdout, /\n200$/);
  assert.ok(Array.isArray(JSON.parse(curlOut.stdout.slice(0, curlOut.stdout.lastIndexOf('\n')))));
  const fetchOut = await run(process.execPath, ['--input-type=module', '-e', fetchSample]);
  assert.match(fetchOut.stdout, /^200 \[/);
});

test('the JSON download of a 2.0 document names the gateway by host, basePath and schemes, without the assembly', async () => {
  const answer = await (await client('anonymous')).get(`${inventoryPage}/openapi.json`);
  assert.equal(answer.status, 200);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(answer.headers.get('content-disposition'), 'attachment; filename="inventory-1.0.0.json"');
  const document = JSON.parse(answer.text);
  assert.equal(document.host, new URL(running.gateway).host);
  assert.equal(document.basePath, '/demo/sandbox/api');
  assert.deepEqual(document.schemes, ['http']);
  assert.equal(document.paths['/items'].get.operationId, 'Item.find');
  assert.deepEqual(document['x-ibm-configuration'].properties, {
    inventory_svc_url: { description: 'Origin of the inventory service' },
  });
  assert.equal(document['x-ibm-configuration'].catalogs, undefined);
  assert.doesNotMatch(answer.text, /assembly|http:\/\//, 'no assembly and no backend address');
});

test('the YAML download is the same document; the logistics assembly and property values stay inside', async () => {
  const web = await client('developer');
  const json = JSON.parse((await web.get(`${logisticsPage}/openapi.json`)).text);
  const yaml = await web.get(`${logisticsPage}/openapi.yaml`);
  assert.equal(yaml.status, 200);
  assert.match(yaml.headers.get('content-type') ?? '', /^application\/yaml/);
  assert.deepEqual(parse(yaml.text), json);
  for (const internal of [
    'assembly',
    'operation-switch',
    'activity-log',
    'shipping/calculate',
    'maps/api/geocode',
    'catalogs',
  ]) {
    assert.equal(yaml.text.includes(internal), false, `${internal} is not in the download`);
  }
  assert.equal(json.basePath, '/demo/sandbox/logistics');
});

test('an OpenAPI 3 download has the gateway as its only server', async () => {
  const answer = await (await client('partner')).get(`${ordersPage}/openapi.json`);
  assert.equal(answer.status, 200);
  const document = JSON.parse(answer.text);
  assert.deepEqual(document.servers, [{ url: `${running.gateway}/demo/sandbox/partner-orders` }]);
  assert.deepEqual(document['x-ibm-configuration'], { type: 'rest' });
  assert.doesNotMatch(answer.text, /10\.9\.8\.7|call-internal/);
});

test('a product visible only to partner-x: page and downloads are 404 to everyone else', async () => {
  const paths = [stockPage, `${stockPage}/openapi.json`, `${stockPage}/openapi.yaml`, `${ordersPage}/openapi.json`];
  for (const who of ['anonymous', 'developer'] as const) {
    const web = await client(who);
    for (const path of paths) {
      const answer = await web.get(path);
      assert.equal(answer.status, 404, `${who} ${path}`);
      assert.doesNotMatch(answer.text, /Partner Stock|partner-stock:|10\.9\.8\.7/);
    }
  }
  const web = await client('partner');
  for (const path of paths) assert.equal((await web.get(path)).status, 200, `partner ${path}`);
  const stock = await web.get(`${stockPage}/openapi.yaml`);
  assert.doesNotMatch(stock.text, /s3cr3t|10\.9\.8\.7|call-internal-stock-backend|assembly/);
  assert.match(stock.text, /stock_backend:\n\s+description: Where stock lives/);
});

test('examples are generated from the schema where the document has none', async () => {
  const page = (await (await client('partner')).get(stockPage)).text;
  const exampleOf = (label: string) => {
    const match = new RegExp(`<p class="hint">${label}</p>\\s*<pre tabindex="0"><code>([\\s\\S]*?)</code></pre>`).exec(
      page,
    );
    return JSON.parse((match?.[1] ?? '').replace(/&quot;/g, '"'));
  };
  const level = {
    sku: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
    count: 250,
    price: 20,
    updated: '2024-01-15T09:30:00Z',
    tags: ['example tag', 'example tag'],
    state: 'in-stock',
    warehouse: { code: 'exam', contact: 'developer@example.com' },
  };
  assert.deepEqual(exampleOf('Example request'), level);
  assert.deepEqual(exampleOf('Example response'), level);
  const [curl] = codeBlocks(page);
  assert.match(curl, /\/demo\/sandbox\/partner-stock\/levels\/3fa85f64-5717-4562-b3fc-2c963f66afa6\?warehouse=north'/);
});

test('provider texts are escaped on the page and in the samples', async () => {
  const page = (await (await client('partner')).get(stockPage)).text;
  assert.equal(page.includes('<script>alert'), false);
  assert.equal(page.includes('<img src=x'), false);
  assert.match(page, /Stock &lt;script&gt;alert\(&quot;api&quot;\)&lt;\/script&gt; levels/);
  assert.match(page, /Level of a warehouse &lt;img src=x onerror=alert\(1\)&gt;/);
});

test('search finds products, APIs and operations, only among what the visitor may see', async () => {
  const anonymous = (await (await client('anonymous')).get('/search?q=items')).text;
  assert.match(
    anonymous,
    /href="\/products\/inventory\/1\.0\.0\/apis\/inventory\/1\.0\.0#get-items-id">GET \/items\/\{id\}<\/a>/,
  );
  for (const who of ['anonymous', 'developer'] as const) {
    const text = (await (await client(who)).get('/search?q=stock%20level')).text;
    assert.doesNotMatch(text, /Partner|partner-stock|\/levels/i, `${who} finds nothing of the partner's product`);
    assert.match(text, /Nothing matches “stock level”/);
  }
  const partnerView = (await (await client('partner')).get('/search?q=STOCK%20level')).text;
  assert.match(
    partnerView,
    /<a href="\/products\/partner-only\/1\.0\.0\/apis\/partner-stock\/1\.0\.0">Partner Stock 1\.0\.0<\/a>/,
  );
  assert.match(
    partnerView,
    /#get-levels-sku">GET \/levels\/\{sku\}<\/a><p class="hint">Level of a warehouse &lt;img src=x/,
  );
  const product = (await (await client('partner')).get('/search?q=partner')).text;
  assert.match(product, /<a href="\/products\/partner-only\/1\.0\.0">Partner Only 1\.0\.0<\/a>/);
  const developer = (await (await client('developer')).get('/search?q=shipping')).text;
  assert.match(
    developer,
    /apis\/logistics\/2\.0\.0#get-shipping">GET \/shipping<\/a><p class="hint">Calculate shipping costs[^<]* · logistics 2\.0\.0</,
  );
});

test('search escapes the query and bounds it', async () => {
  const answer = await (
    await client('anonymous')
  ).get(`/search?q=${encodeURIComponent('<b>x"y</b>')}${'z'.repeat(500)}`);
  assert.equal(answer.status, 200);
  assert.equal(answer.text.includes('<b>x'), false);
  // The first 100 characters: the 10 of the markup and 90 of the z's.
  assert.ok(answer.text.includes(`value="&lt;b&gt;x&quot;y&lt;/b&gt;${'z'.repeat(90)}" maxlength="100"`));
});

for (const width of [1280, 375]) {
  test(`in Chromium at ${width} px: API and search pages have no serious axe findings and no sideways scroll`, async () => {
    const { context, page, refusedByCsp } = await screenPage(browser, width);
    await signIn(page, running.portal, demo.developer.email, demo.developer.password);
    for (const path of [inventoryPage, logisticsPage, '/search?q=items']) {
      await page.goto(`${running.portal}${path}`);
      assert.deepEqual(await seriousAccessibilityFindings(page), [], `${path} collapsed`);
      await page.evaluate(() =>
        document.querySelectorAll('details').forEach((d) => {
          d.open = true;
        }),
      );
      assert.deepEqual(await seriousAccessibilityFindings(page), [], `${path} expanded`);
      const scrollWidth = await page.evaluate(() => document.scrollingElement!.scrollWidth);
      assert.ok(scrollWidth <= width, `${path} is ${scrollWidth} px wide at ${width} px`);
    }
    await page.goto(`${running.portal}${inventoryPage}`);
    await screenshot(page, `portal-api-inventory-${width}`);
    assert.deepEqual(refusedByCsp, []);
    await context.close();
  });
}

test('the operation list opens the section it links to, and Copy copies the sample', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: running.portal });
  const page = await context.newPage();
  await page.goto(`${running.portal}${inventoryPage}`);
  const section = page.locator('section#put-items-id');
  assert.equal(await section.locator('details').getAttribute('open'), null);
  await page.getByRole('navigation', { name: 'Operations' }).getByRole('link', { name: 'PUT /items/{id}' }).click();
  assert.equal(await section.locator('details').getAttribute('open'), '');
  await section.getByRole('button', { name: 'Copy the curl sample' }).click();
  await section.getByText('Copied').waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, await section.locator('code[id$="-sample-curl"]').textContent());
  assert.match(copied, /--request PUT[\s\S]*--data '\{\n {2}"id": 1,\n {2}"name": "example name"/);
  await context.close();
});
