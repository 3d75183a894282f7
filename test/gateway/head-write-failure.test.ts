/**
 * An answer whose head cannot be written (a header value an assembly made with characters HTTP
 * does not allow: Node's writeHead throws) is replaced by the 500 envelope. Found by a review: the
 * fallback's status line read `HTTP/1.1 500 OK`, the reason phrase left from the failed attempt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exchangeRaw, rawBody } from '../helpers/raw-http.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const setHeader = (value: string) => ({
  'set-variable': { version: '2.0.0', actions: [{ set: 'message.headers.x-note', value }] },
});
const script = (source: string) => ({ gatewayscript: { version: '2.0.0', source } });

const cases: Record<string, unknown[]> = {
  literal: [setHeader('bad\u0001value')],
  parameter: [setHeader('$(request.parameters.note)')],
  script: [script("context.set('message.headers.x-note', 'line\\u0000break');")],
  status: [
    setHeader('bad\u0001value'),
    { 'set-variable': { version: '2.0.0', actions: [{ set: 'message.status.code', value: '404', type: 'number' }] } },
  ],
};

const apiText = JSON.stringify({
  swagger: '2.0',
  info: { title: 'heads', 'x-ibm-name': 'heads', version: '1.0.0' },
  basePath: '/heads',
  security: [],
  paths: Object.fromEntries(
    Object.keys(cases).map((name) => [
      `/${name}`,
      {
        get: {
          operationId: name,
          parameters: [{ name: 'note', in: 'query', type: 'string' }],
          responses: { 200: { description: 'OK' } },
        },
      },
    ]),
  ),
  'x-ibm-configuration': {
    assembly: {
      execute: [
        {
          'operation-switch': {
            version: '2.0.0',
            case: Object.entries(cases).map(([name, execute]) => ({ operations: [name], execute })),
          },
        },
      ],
    },
  },
});

const productText = `product: 1.0.0
info: {name: heads-product, title: Heads, version: 1.0.0}
plans: {default: {title: Default}}
apis: {heads: {name: 'heads:1.0.0'}}
`;

describe('an answer whose head cannot be written', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'all' });
    await t.platform.services.importApi(t.orgId, { text: apiText, file: 'heads.json', state: 'online' });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'heads-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t?.close();
  });

  const get = (target: string) =>
    exchangeRaw(t.gateway, `GET /acme/sandbox/heads${target} HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n`);

  for (const [name, target] of [
    ['a set-variable literal', '/literal'],
    ['a set-variable from a query parameter', '/parameter?note=a%01b'],
    ['a GatewayScript', '/script'],
    ['a set-variable, after the assembly set 404 OK', '/status'],
  ]) {
    test(`answers an invalid header value from ${name} with 500 Internal Server Error and the envelope`, async () => {
      const answer = await get(target);
      assert.match(answer, /^HTTP\/1\.1 500 Internal Server Error\r\n/);
      assert.doesNotMatch(answer, /x-note/i);
      const envelope = JSON.parse(rawBody(answer)) as Record<string, string>;
      assert.equal(envelope.httpCode, '500');
      assert.equal(envelope.httpMessage, 'Internal Server Error');
      assert.match(envelope.moreInformation, /^Internal gateway error \(transaction [0-9a-f]+\)$/);
    });
  }
});
