/**
 * Review of the gateway's HTTP edge: what frames an answer and what a body means must be the
 * same for the consumer, the policies and the backend. Found by the review:
 *
 * - A 1xx status an assembly set (set-variable, throw) was written as the answer: the consumer,
 *   or a proxy in front sharing the connection, took the next answer on the connection for it.
 * - A 204 went out with `content-length` of the body it did not send.
 * - A gzip request body reached the policies as opaque bytes and the backend decoded
 *   (a schema or a script checked something else than what the backend read; the size limit
 *   bounded only the compressed bytes), and a gzip backend answer a policy rewrote went out
 *   still labelled gzip.
 *
 * The ambiguous request framings are refused by Node's parser; their tests guard that.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const limit = 64 * 1024;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The backend: `/echo` answers what it received; `/gzip` and `/bomb` answer coded bodies. */
const backend = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/gzip') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(JSON.stringify({ public: 'ok', secret: 'internal' })));
    } else if (req.url === '/bomb') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' });
      res.end(brotliCompressSync(Buffer.alloc(64 * limit, ' ')));
    } else {
      const received: Received = { headers: req.headers, body: Buffer.concat(chunks).toString() };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received));
    }
  });
});

const setVariable = (...actions: Array<Record<string, unknown>>) => ({ 'set-variable': { version: '2.0.0', actions } });
const invoke = (target: string) => ({ invoke: { version: '2.0.0', 'target-url': target, verb: 'keep' } });

function apiDocument(target: string): string {
  const cases: Record<string, unknown[]> = {
    interim: [setVariable({ set: 'message.status.code', value: '$(request.parameters.code)', type: 'number' })],
    thrown: [{ throw: { version: '2.1.0', name: 'Switching', 'error-status-code': 101 } }],
    empty: [
      setVariable({ set: 'message.status.code', value: '204', type: 'number' }, { set: 'message.body', value: 'gone' }),
    ],
    upload: [
      setVariable({ set: 'message.headers.x-admin-seen', value: '$(request.body.admin)' }),
      invoke(`${target}/echo`),
    ],
    gzip: [invoke(`${target}/gzip`), setVariable({ set: 'message.body', value: '$(message.body.public)' })],
    bomb: [invoke(`${target}/bomb`)],
  };
  const paths: Record<string, unknown> = {};
  for (const name of Object.keys(cases)) {
    const parameters = [{ name: 'code', in: 'query', type: 'integer' }];
    const answers = { 200: { description: 'OK' } };
    paths[`/${name}`] = {
      get: { operationId: name, parameters, responses: answers },
      post: { operationId: `${name}.post`, responses: answers },
    };
  }
  const operationCases = Object.entries(cases).map(([name, execute]) => ({
    operations: [name, `${name}.post`],
    execute,
  }));
  return JSON.stringify({
    swagger: '2.0',
    info: { title: 'framing', 'x-ibm-name': 'framing', version: '1.0.0' },
    basePath: '/framing',
    security: [],
    paths,
    'x-ibm-configuration': {
      assembly: { execute: [{ 'operation-switch': { version: '2.0.0', case: operationCases } }] },
    },
  });
}

const productText = `product: 1.0.0
info: {name: framing-product, title: Framing, version: 1.0.0}
plans: {default: {title: Default}}
apis: {framing: {name: 'framing:1.0.0'}}
`;

/**
 * Writes `bytes` on one connection and collects what comes back until the server closes it, or
 * a moment after `answers` status lines have arrived (for the rest of the last one).
 */
function exchangeRaw(gateway: string, bytes: Buffer | string, answers = 1): Promise<string> {
  const { hostname, port } = new URL(gateway);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let text = '';
    const done = () => {
      clearTimeout(giveUp);
      socket.destroy();
      resolve(text);
    };
    socket.on('data', (chunk: Buffer) => {
      const before = text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
      text += chunk.toString('latin1');
      const now = text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
      if (before < answers && now >= answers) setTimeout(done, 100);
    });
    socket.on('end', done);
    socket.on('error', reject);
    const giveUp = setTimeout(done, 5000);
  });
}

function post(gateway: string, path: string, headers: Record<string, string>, body: Buffer): Promise<string> {
  const fields = Object.entries({ ...headers, 'content-length': String(body.length), connection: 'close' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head = `POST /acme/sandbox/framing${path} HTTP/1.1\r\nHost: gateway\r\n${fields}\r\n`;
  return exchangeRaw(gateway, Buffer.concat([Buffer.from(head), body]));
}

function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

describe('the gateway frames answers and reads coded bodies as the consumer and the backend do', () => {
  let t: TestPlatform;
  before(async () => {
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    t = await startTestPlatform({
      role: 'all',
      env: { PORTICO_MAX_REQUEST_BYTES: String(limit), PORTICO_MAX_BACKEND_BYTES: String(limit) },
    });
    const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    await t.platform.services.importApi(t.orgId, { text: apiDocument(target), file: 'framing.json', state: 'online' });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'framing-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t?.close();
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  });

  for (const code of [100, 101, 103]) {
    test(`answers a ${code} set by the assembly with 500, and the next request on the connection gets its own answer`, async () => {
      const head = (path: string) => `GET /acme/sandbox/framing${path} HTTP/1.1\r\nHost: gateway\r\n\r\n`;
      const answer = await exchangeRaw(t.gateway, head(`/interim?code=${code}`) + head('/empty'), 2);
      const statusLines = answer.match(/HTTP\/1\.1 \d{3} /g);
      assert.deepEqual(statusLines, ['HTTP/1.1 500 ', 'HTTP/1.1 204 ']);
      assert.match(answer, /"httpCode":"500".*"moreInformation":"Internal gateway error \(transaction [0-9a-f]+\)"/);
    });
  }

  test('answers a throw with error-status-code 101 with 500, not a protocol switch', async () => {
    const answer = await exchangeRaw(
      t.gateway,
      'GET /acme/sandbox/framing/thrown HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 500 /);
  });

  const ambiguous: Record<string, string> = {
    'Content-Length beside Transfer-Encoding': 'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'a transfer coding that does not end in chunked': 'Transfer-Encoding: identity\r\nContent-Length: 3\r\n\r\nabc',
    'an obs-fold continuation line': 'X-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n',
    'a chunk size that is not hexadecimal': 'Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n',
  };
  for (const [what, rest] of Object.entries(ambiguous)) {
    test(`refuses a request with ${what} with 400 and closes the connection`, async () => {
      const head = 'POST /acme/sandbox/framing/upload HTTP/1.1\r\nHost: gateway\r\n';
      const answer = await exchangeRaw(t.gateway, `${head}${rest}GET /acme/sandbox/framing/empty HTTP/1.1\r\n\r\n`, 2);
      assert.match(answer, /^HTTP\/1\.1 400 /);
      assert.equal(answer.match(/HTTP\/1\.1 \d{3} /g)?.length, 1, 'nothing after the 400 is read as a request');
    });
  }

  test('writes a 204 without content-length and without the body the assembly left', async () => {
    const answer = await exchangeRaw(
      t.gateway,
      'GET /acme/sandbox/framing/empty HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 204 /);
    assert.doesNotMatch(answer, /content-length/i);
    assert.equal(bodyOf(answer), '');
  });

  test('decodes a gzip request body: the policies and the backend read the same JSON, uncoded', async () => {
    const json = JSON.stringify({ admin: true });
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const answer = await post(t.gateway, '/upload', headers, gzipSync(json));
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const received = JSON.parse(bodyOf(answer)) as Received;
    assert.equal(received.body, json);
    assert.equal(received.headers['content-encoding'], undefined);
    assert.equal(received.headers['content-length'], String(json.length));
    assert.equal(received.headers['x-admin-seen'], 'true');
  });

  test('refuses a gzip request body that decodes past the request limit with 413', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * limit, ' '));
    assert.ok(bomb.length < limit);
    const answer = await post(t.gateway, '/upload', { 'content-encoding': 'gzip' }, bomb);
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"moreInformation":"The request body is larger than 65536 bytes"/);
  });

  test('refuses a body that is not the coding it names, and a coding the gateway cannot read, with 400', async () => {
    const corrupt = await post(t.gateway, '/upload', { 'content-encoding': 'gzip' }, Buffer.from('{"admin":true}'));
    assert.match(corrupt, /^HTTP\/1\.1 400 /);
    assert.match(corrupt, /"moreInformation":"The request body could not be parsed: it is not valid gzip"/);
    const zstd = await post(t.gateway, '/upload', { 'content-encoding': 'zstd' }, Buffer.from('x'));
    assert.match(zstd, /^HTTP\/1\.1 400 /);
    assert.match(zstd, /"moreInformation":"The request header Content-Encoding is invalid: [^"]+"/);
  });

  test('decodes a gzip backend answer, so a policy reads it and the rewritten body goes out uncoded', async () => {
    const response = await fetch(`${t.gateway}/acme/sandbox/framing/gzip`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-encoding'), null);
    assert.equal(await response.text(), 'ok');
  });

  test('ends a backend answer that decodes past the backend limit with 502', async () => {
    const response = await fetch(`${t.gateway}/acme/sandbox/framing/bomb`);
    assert.equal(response.status, 502);
    const envelope = (await response.json()) as { httpCode: string; moreInformation: string };
    assert.equal(envelope.httpCode, '502');
    assert.match(envelope.moreInformation, /larger than 65536 bytes/);
  });
});
