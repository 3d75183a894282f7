/**
 * Header fields between consumer, gateway and backend: hop-by-hop fields (RFC 9110 §7.6.1) stop at
 * the gateway in both directions, a backend's several `Set-Cookie` lines reach the consumer as
 * several lines (RFC 6265 §3), and a request body in a transfer coding other than `chunked` is
 * refused (RFC 9112 §6.1).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const cookies = ['a=1; Expires=Wed, 21 Oct 2037 07:28:00 GMT; Path=/', 'b=2; HttpOnly'];

/** `/echo` answers the request headers it received; `/answer` answers with fields of its own. */
const backend = createServer((req, res) => {
  if (req.url === '/echo') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
    return;
  }
  res.writeHead(200, [
    ...['content-type', 'text/plain', 'set-cookie', cookies[0], 'set-cookie', cookies[1]],
    ...['connection', 'keep-alive, X-Internal', 'connection', 'x-global-transaction-id, access-control-allow-origin'],
    ...['x-internal', 'secret', 'x-global-transaction-id', 'from-backend', 'proxy-authenticate', 'Basic realm="b"'],
    ...['keep-alive', 'timeout=5', 'x-kept', 'yes'],
  ]);
  res.end('answer');
});

// The script shows what a GatewayScript reads of the answer's Set-Cookie lines.
// With X-Add-Cookie, it sets one cookie and adds another the way a script adds a header value.
const script = `var c = context.message.header.get('set-cookie');
if (c !== undefined) context.message.header.set('x-seen-cookie', JSON.stringify(c));
if (context.get('request.headers.x-add-cookie')) {
  context.message.header.set('set-cookie', 'a=1');
  apim.setvariable('message.headers.set-cookie', 'c=3', 'add');
}`;

function apiText(target: string): string {
  return `swagger: '2.0'
info: {title: hops, x-ibm-name: hops, version: 1.0.0}
basePath: /hops
security: []
paths:
  /echo:
    get: {responses: {'200': {description: the request headers the backend received}}}
    post: {responses: {'200': {description: the same}}}
  /answer: {get: {responses: {'200': {description: the backend's own fields}}}}
x-ibm-configuration:
  cors: {enabled: true}
  assembly:
    execute:
      - invoke: {target-url: '${target}$(api.operation.path)'}
      - gatewayscript: {version: 2.0.0, source: ${JSON.stringify(script)}}
`;
}

const productText = `product: 1.0.0
info: {name: hops-product, title: Hops, version: 1.0.0}
plans: {default: {title: Default}}
apis: {hops: {name: 'hops:1.0.0'}}
`;

/** Sends `bytes` as is on a new connection; resolves with the whole answer once the server closes it. */
function rawRequest(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** The answer's head as `[name, value]` lines, names in lower case. */
function headLines(answer: string): Array<[string, string]> {
  const head = answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n').slice(1);
  return head.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
  });
}

describe('header fields between consumer, gateway and backend', () => {
  let t: TestPlatform;
  before(async () => {
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    t = await startTestPlatform({ role: 'all' });
    const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    await t.platform.services.importApi(t.orgId, { text: apiText(target), file: 'hops.yaml', state: 'online' });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'hops-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t?.close();
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  });

  async function backendSaw(fields: string): Promise<IncomingHttpHeaders> {
    const answer = await rawRequest(
      t.gateway,
      `GET /acme/sandbox/hops/echo HTTP/1.1\r\nHost: gateway.example\r\n${fields}\r\n`,
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as IncomingHttpHeaders;
  }

  test('does not send the backend the fields the consumer names in Connection, nor Proxy-Authorization', async () => {
    const seen = await backendSaw(
      'Connection: close, X-Drop-Me\r\nConnection: x-drop-too\r\nX-Drop-Me: 1\r\nX-Drop-Too: 2\r\nX-Kept: yes\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\n',
    );
    assert.equal(seen['x-drop-me'], undefined);
    assert.equal(seen['x-drop-too'], undefined);
    assert.equal(seen['proxy-authorization'], undefined);
    assert.equal(seen['x-kept'], 'yes');
  });

  test("a consumer's Connection list cannot remove the X-Forwarded-* fields the gateway adds", async () => {
    const seen = await backendSaw('Connection: close, x-forwarded-for, x-forwarded-host, x-forwarded-proto, host\r\n');
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen['x-forwarded-host'], 'gateway.example');
    assert.equal(seen['x-forwarded-proto'], 'http');
  });

  test('does not pass the consumer the fields the backend names in Connection, nor Proxy-Authenticate', async () => {
    const answer = await fetch(`${t.gateway}/acme/sandbox/hops/answer`, { headers: { origin: 'https://app.example' } });
    assert.equal(answer.status, 200);
    assert.equal(await answer.text(), 'answer');
    assert.equal(answer.headers.get('x-internal'), null);
    assert.equal(answer.headers.get('proxy-authenticate'), null);
    // The gateway's own connection to the consumer has a Keep-Alive of its own (Node's), not the backend's.
    assert.notEqual(answer.headers.get('keep-alive'), 'timeout=5');
    assert.equal(answer.headers.get('x-kept'), 'yes');
  });

  test("a backend's Connection list cannot remove the gateway's own fields", async () => {
    const answer = await fetch(`${t.gateway}/acme/sandbox/hops/answer`, { headers: { origin: 'https://app.example' } });
    await answer.arrayBuffer();
    assert.match(answer.headers.get('x-global-transaction-id') ?? '', /^[0-9a-f]{16}$/);
    assert.equal(answer.headers.get('access-control-allow-origin'), 'https://app.example');
  });

  test("passes a backend's several Set-Cookie lines to the consumer as several lines", async () => {
    const answer = await rawRequest(
      t.gateway,
      'GET /acme/sandbox/hops/answer HTTP/1.1\r\nHost: g\r\nConnection: close\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const lines = headLines(answer);
    assert.deepEqual(
      lines.filter(([name]) => name === 'set-cookie').map(([, value]) => value),
      cookies,
    );
  });

  test("a Set-Cookie a script adds with apim.setvariable(…, 'add') is one more line, not folded in", async () => {
    const answer = await rawRequest(
      t.gateway,
      'GET /acme/sandbox/hops/answer HTTP/1.1\r\nHost: g\r\nX-Add-Cookie: 1\r\nConnection: close\r\n\r\n',
    );
    assert.match(answer, /^HTTP\/1\.1 200 /);
    const lines = headLines(answer);
    assert.deepEqual(
      lines.filter(([name]) => name === 'set-cookie').map(([, value]) => value),
      ['a=1', 'c=3'],
    );
  });

  test('a GatewayScript reads several Set-Cookie lines as a list of values, as DataPower gives them', async () => {
    const answer = await fetch(`${t.gateway}/acme/sandbox/hops/answer`);
    await answer.arrayBuffer();
    assert.deepEqual(JSON.parse(answer.headers.get('x-seen-cookie') ?? 'null'), cookies);
  });

  test('refuses a request body in a transfer coding other than chunked with 400 GW_BAD_HEADER', async () => {
    const gzipped = await rawRequest(
      t.gateway,
      'POST /acme/sandbox/hops/echo HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n1\r\nx\r\n0\r\n\r\n',
    );
    assert.match(gzipped, /^HTTP\/1\.1 400 /);
    assert.match(gzipped, /"moreInformation":"The request header Transfer-Encoding is invalid: [^"]*chunked/);
    const chunked = await rawRequest(
      t.gateway,
      'POST /acme/sandbox/hops/echo HTTP/1.1\r\nHost: g\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n1\r\nx\r\n0\r\n\r\n',
    );
    assert.match(chunked, /^HTTP\/1\.1 200 /);
  });
});
