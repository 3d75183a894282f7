/**
 * The XML a policy parses from the consumer's request is capped by the operator's request
 * limit (PORTICO_MAX_REQUEST_BYTES), not by a fixed 4 MiB: raised, a larger XML request
 * converts (xml-to-json and the map reading XML); lowered, a larger one is refused with the
 * request limit's own 413. Through a real gateway, one per limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const MiB = 1024 * 1024;

const assembly: Record<string, unknown[]> = {
  tojson: [{ 'xml-to-json': { version: '2.0.0', title: 'to json' } }],
  mapread: [
    {
      map: {
        version: '2.0.0',
        title: 'read xml',
        inputs: { input: { schema: { type: 'object' }, variable: 'request.body', content: 'application/xml' } },
        outputs: { output: { schema: { type: 'object' }, variable: 'message.body', content: 'application/json' } },
        actions: [{ set: 'output.count', from: 'input.r.item', value: '$count($)' }],
      },
    },
  ],
};

const api = (name: string) => ({
  swagger: '2.0',
  basePath: `/${name}`,
  info: { title: name, version: '1.0.0', 'x-ibm-name': name },
  security: [],
  paths: { '/': { post: { operationId: 'convert', responses: { 200: { description: 'converted' } } } } },
  'x-ibm-configuration': { assembly: { execute: assembly[name] } },
});

/** An XML document of about `bytes` bytes: `<r>` holding 207-byte `<item>`s (few nodes: the size is what counts). */
function xmlOf(bytes: number): { text: string; items: number } {
  const item = `<item>${'x'.repeat(194)}</item>`;
  const items = Math.ceil(bytes / item.length);
  return { text: `<r>${item.repeat(items)}</r>`, items };
}

async function startWith(maxRequestBytes: number): Promise<TestPlatform> {
  const t = await startTestPlatform({ env: { PORTICO_MAX_REQUEST_BYTES: String(maxRequestBytes) } });
  const services = t.platform.services;
  for (const name of Object.keys(assembly)) {
    await services.importApi(t.orgId, {
      text: JSON.stringify(api(name)),
      file: `${name}.json`,
      replace: true,
      state: 'online',
    });
  }
  const product = `product: 1.0.0
info: { name: xmlsize, title: XML size, version: 1.0.0 }
plans: { default: { title: Default } }
apis: { tojson: { name: 'tojson:1.0.0' }, mapread: { name: 'mapread:1.0.0' } }
`;
  await services.putProduct(t.orgId, 'sandbox', { text: product, file: 'xmlsize.yaml', state: 'published' });
  await t.platform.gateway!.reload();
  return t;
}

const post = (t: TestPlatform, name: string, xml: string) =>
  fetch(`${t.gateway}/acme/sandbox/${name}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/xml' },
    body: xml,
  });

describe('PORTICO_MAX_REQUEST_BYTES raised to 8 MiB', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startWith(8 * MiB);
  });
  after(() => t?.close());

  test('xml-to-json converts a 5 MiB XML request', async () => {
    const { text, items } = xmlOf(5 * MiB);
    assert.ok(Buffer.byteLength(text) > 5 * MiB);
    const response = await post(t, 'tojson', text);
    const body = await response.text();
    assert.equal(response.status, 200, body.slice(0, 300));
    assert.equal(response.headers.get('content-type'), 'application/json');
    assert.equal((JSON.parse(body) as { r: { item: unknown[] } }).r.item.length, items);
  });
  test('the map reads a 5 MiB XML request', async () => {
    const { text, items } = xmlOf(5 * MiB);
    const response = await post(t, 'mapread', text);
    const body = await response.text();
    assert.equal(response.status, 200, body.slice(0, 300));
    assert.deepEqual(JSON.parse(body), { count: items });
  });
  test('a request past the raised limit is still the request limit’s 413', async () => {
    const response = await post(t, 'tojson', xmlOf(9 * MiB).text);
    assert.equal(response.status, 413);
    const envelope = (await response.json()) as { httpCode: string; moreInformation: string };
    assert.equal(envelope.httpCode, '413');
    assert.equal(envelope.moreInformation, `The request body is larger than ${8 * MiB} bytes`);
  });
});

describe('PORTICO_MAX_REQUEST_BYTES lowered to 1 MiB', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startWith(MiB);
  });
  after(() => t?.close());

  for (const name of Object.keys(assembly)) {
    test(`${name}: a 2 MiB XML request is refused with the request limit's 413`, async () => {
      const response = await post(t, name, xmlOf(2 * MiB).text);
      assert.equal(response.status, 413);
      const envelope = (await response.json()) as { httpCode: string; moreInformation: string };
      assert.equal(envelope.httpCode, '413');
      assert.equal(envelope.moreInformation, `The request body is larger than ${MiB} bytes`);
    });
  }
  test('a 900 KiB XML request still converts', async () => {
    const { text, items } = xmlOf(900 * 1024);
    const response = await post(t, 'tojson', text);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { r: { item: unknown[] } }).r.item.length, items);
  });
});
