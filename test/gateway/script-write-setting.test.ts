/**
 * PORTICO_SCRIPT_WRITE_BYTES is a setting like the others: a bad value stops the start with
 * CONFIG_INVALID naming it, and the value set reaches the gateway's script pool and inline tier
 * (a run past it fails with JavaScriptError, one under it is served).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { loadSettings } from '../../src/config/config.ts';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

const productText = readFileSync(
  new URL('../../examples/accessories/accessories-product.yaml', import.meta.url),
  'utf8',
);

// Writes `size` characters as the body: a 100 KB write passes the default 16 MiB, not 64 KiB.
const source = `var size = Number(context.get('request.parameters.size'));
context.message.body.write({ filler: new Array(size + 1).join('x') });`;

const api = JSON.stringify({
  swagger: '2.0',
  info: { title: 'writer', 'x-ibm-name': 'writer', version: '1.0.0' },
  basePath: '/writer',
  securityDefinitions: { clientID: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
  security: [{ clientID: [] }],
  paths: {
    '/run': {
      get: {
        parameters: [{ name: 'size', in: 'query', type: 'integer', required: true }],
        responses: { 200: { description: 'ok' } },
      },
    },
  },
  'x-ibm-configuration': {
    assembly: { execute: [{ gatewayscript: { version: '2.0.0', title: 'writer-script', source } }] },
  },
});

test('a bad PORTICO_SCRIPT_WRITE_BYTES stops the start, naming the setting', () => {
  for (const bad of ['1000', '2147483648', 'lots']) {
    assert.throws(() => loadSettings({ PORTICO_SCRIPT_WRITE_BYTES: bad }), {
      code: 'CONFIG_INVALID',
      message: /PORTICO_SCRIPT_WRITE_BYTES/,
    });
  }
  assert.equal(loadSettings({}).scriptWriteBytes, 16 * 1024 * 1024);
});

for (const inline of ['0', '1000']) {
  describe(`the gateway applies PORTICO_SCRIPT_WRITE_BYTES (inline tier ${inline === '0' ? 'off' : 'on'})`, () => {
    let t: TestDemo;
    let headers: Record<string, string>;

    before(async () => {
      t = await startTestDemo({ PORTICO_SCRIPT_WRITE_BYTES: String(64 * 1024), PORTICO_SCRIPT_INLINE_US: inline });
      const services = t.handle.platform.services;
      await services.importApi(t.orgId, { text: api, file: 'writer.json', state: 'online' });
      const product = productText
        .replace(/name: accessories/, 'name: writers')
        .replace(/title: Accessories/, 'title: Writers')
        .replace(/apis:[\s\S]*$/, "apis:\n  writer:\n    name: 'writer:1.0.0'\n");
      await services.putProduct(t.orgId, 'sandbox', { text: product, file: 'writers.yaml', state: 'published' });
      headers = { 'X-IBM-Client-Id': (await t.newApp('silver', { product: 'writers' })).clientId };
    });
    after(() => t.close());

    test('a write under the budget is served, one past it fails with JavaScriptError', async () => {
      const small = await fetch(`${t.base}/writer/run?size=1000`, { headers });
      assert.equal(small.status, 200);
      assert.equal(((await small.json()) as { filler: string }).filler.length, 1000);
      const large = await fetch(`${t.base}/writer/run?size=100000`, { headers });
      assert.equal(large.status, 500);
      const envelope = (await large.json()) as { httpCode: string; moreInformation: string };
      assert.equal(envelope.httpCode, '500');
      assert.match(envelope.moreInformation, /writes carried more than 65536 bytes/);
    });
  });
}
