/**
 * An answer written before the request's body was read to its end (a 413 past
 * `PORTICO_MAX_REQUEST_BYTES`, a 404 or 401 refused before the body phase) closes the connection
 * once it is written. Found by a review: the rest of the body was drained until the server's
 * request timeout, so a client sending a body that never ends kept a connection, and the
 * gateway's reading, busy for two minutes per connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunk, exchangeRaw, slowUpload } from '../helpers/raw-http.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const limit = 1024;
/** Far above what the test waits: a close seen in the test's time is the gateway's own doing. */
const requestTimeoutMs = 60_000;
/** What "closed at once" allows after the answer arrived. */
const closeWithinMs = 5000;
const upload = (url: string, head: string, piece: () => string) => slowUpload(url, head, piece, 2 * closeWithinMs);

const apiText = JSON.stringify({
  swagger: '2.0',
  info: { title: 'edge', 'x-ibm-name': 'edge', version: '1.0.0' },
  basePath: '/edge',
  security: [],
  paths: {
    '/upload': { post: { operationId: 'upload', responses: { 200: { description: 'OK' } } } },
    '/guarded': {
      post: {
        operationId: 'guarded',
        security: [{ clientId: [] }],
        responses: { 200: { description: 'OK' } },
      },
    },
  },
  securityDefinitions: { clientId: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
  'x-ibm-configuration': {
    assembly: {
      execute: [{ 'set-variable': { version: '2.0.0', actions: [{ set: 'message.body', value: 'stored' }] } }],
    },
  },
});

const productText = `product: 1.0.0
info: {name: edge-product, title: Edge, version: 1.0.0}
plans: {default: {title: Default}}
apis: {edge: {name: 'edge:1.0.0'}}
`;

describe('an answer sent before the request body was read closes the connection', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({
      role: 'all',
      env: {
        PORTICO_MAX_REQUEST_BYTES: String(limit),
        PORTICO_GATEWAY_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
      },
    });
    await t.platform.services.importApi(t.orgId, { text: apiText, file: 'edge.json', state: 'online' });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'edge-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t?.close();
  });

  const post = (path: string, framing: string) =>
    `POST /acme/sandbox/edge${path} HTTP/1.1\r\nHost: gateway\r\nContent-Type: text/plain\r\n${framing}\r\n`;

  test('a 413 for a declared length past the limit, the body still coming, closes at once', async () => {
    const { answer, closedAfterMs } = await upload(t.gateway, post('/upload', 'Content-Length: 100000000\r\n'), () =>
      'y'.repeat(512),
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /"httpCode":"413"/);
    assert.ok(closedAfterMs < closeWithinMs, `closed ${closedAfterMs} ms after the 413`);
  });

  test('a 413 for a chunked body that crosses the limit and never ends closes at once', async () => {
    const { answer, closedAfterMs } = await upload(t.gateway, post('/upload', 'Transfer-Encoding: chunked\r\n'), () =>
      chunk(512),
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.ok(closedAfterMs < closeWithinMs, `closed ${closedAfterMs} ms after the 413`);
  });

  test('a 404 and a 401 answered before the body phase close the connection while the body still comes', async () => {
    for (const [path, status] of [
      ['/nowhere', 404],
      ['/guarded', 401],
    ] as const) {
      const { answer, closedAfterMs } = await upload(t.gateway, post(path, 'Transfer-Encoding: chunked\r\n'), () =>
        chunk(100),
      );
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.ok(closedAfterMs < closeWithinMs, `${status}: closed ${closedAfterMs} ms after the answer`);
    }
  });

  test('a request whose body was read whole keeps its connection for the next request', async () => {
    const body = 'z'.repeat(100);
    const first = `${post('/upload', `Content-Length: ${body.length}\r\n`)}${body}`;
    const second = post('/upload', 'Content-Length: 0\r\nConnection: close\r\n');
    const answer = await exchangeRaw(t.gateway, first + second, 2);
    assert.deepEqual(answer.match(/HTTP\/1\.1 \d{3} /g), ['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
    assert.doesNotMatch(answer.slice(0, answer.indexOf('stored')), /connection: close/i);
  });
});
