/**
 * issue-12, finding 6, through the real gateway: consumers cannot reach backend paths outside
 * the target URL, and API Connect's dynamic routing (`$(target-url)` set by the flow) works.
 * The backend records every path it receives; requests are sent with node:http so that
 * backslashes and encoded dots reach the gateway as the attacker wrote them.
 */
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startSoapPlatform } from '../soap/harness.ts';
import type { SoapPlatform } from '../soap/harness.ts';

interface Answer {
  status: number;
  body: { httpCode?: string; moreInformation?: string; path?: string };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

function invoke(title: string, target: string): Record<string, unknown> {
  return { invoke: { version: '2.0.0', title, 'target-url': target, verb: 'GET' } };
}

function setTarget(value: string): Record<string, unknown> {
  return { 'set-variable': { version: '2.0.0', actions: [{ set: 'target-url', value }] } };
}

function operation(operationId: string, parameters: Array<{ name: string; in: string }> = []): Record<string, unknown> {
  return {
    get: {
      operationId,
      parameters: parameters.map((p) => ({ ...p, required: true, type: 'string' })),
      responses: { 200: { description: 'OK' } },
    },
  };
}

/** One operation per case, each with its own invoke (operation-switch). */
function apiDocument(backend: string): string {
  const cases: Array<[string, unknown[]]> = [
    ['echo.segment', [invoke('segment', `${backend}/echo/{seg}/end`)]],
    ['echo.param', [invoke('param', `${backend}/echo/$(request.parameters.v)/end`)]],
    ['echo.path', [invoke('path', `${backend}/echo$(request.path)`)]],
    ['echo.query', [invoke('query', `${backend}/q?to={v}`)]],
    ['dynamic.set', [setTarget(`${backend}/dynamic/set`), invoke('dynamic', '$(target-url)')]],
    [
      'dynamic.script',
      [
        {
          gatewayscript: {
            version: '2.0.0',
            source: `context.set('target-url', '${backend}/dynamic/script');`,
          },
        },
        invoke('scripted', '$(target-url)/orders/$(request.parameters.id)'),
      ],
    ],
    ['dynamic.property', [invoke('property', '$(api.properties.svc)/props/{seg}')]],
    ['dynamic.ftp', [setTarget('ftp://127.0.0.1/x'), invoke('ftp', '$(target-url)')]],
  ];
  return JSON.stringify({
    swagger: '2.0',
    info: { title: 'backend-urls', 'x-ibm-name': 'backend-urls', version: '1.0.0' },
    basePath: '/urls',
    securityDefinitions: { clientID: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
    security: [{ clientID: [] }],
    paths: {
      '/echo/{seg}': operation('echo.segment', [{ name: 'seg', in: 'path' }]),
      '/param': operation('echo.param', [{ name: 'v', in: 'query' }]),
      '/raw/{p}': operation('echo.path', [{ name: 'p', in: 'path' }]),
      '/query': operation('echo.query', [{ name: 'v', in: 'query' }]),
      '/dynamic': operation('dynamic.set'),
      '/scripted': operation('dynamic.script', [{ name: 'id', in: 'query' }]),
      '/props/{seg}': operation('dynamic.property', [{ name: 'seg', in: 'path' }]),
      '/ftp': operation('dynamic.ftp'),
    },
    'x-ibm-configuration': {
      properties: { svc: { value: `${backend}/from-property` } },
      assembly: {
        execute: [
          {
            'operation-switch': {
              version: '2.0.0',
              case: cases.map(([id, execute]) => ({ operations: [id], execute })),
            },
          },
        ],
      },
    },
  });
}

describe('backend URLs stay under the target; dynamic routing works (issue-12, finding 6)', () => {
  let platform: SoapPlatform;
  let backendServer: Server;
  let gatewayPort: number;
  let apiPath: string;
  let clientId: string;
  const received: string[] = [];

  before(async () => {
    backendServer = createServer((req, res) => {
      received.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url }));
    });
    const backend = `http://127.0.0.1:${await listen(backendServer)}`;
    platform = await startSoapPlatform();
    const published = await platform.publish({ text: apiDocument(backend), file: 'backend-urls.json' });
    const base = new URL(published.base);
    gatewayPort = Number(base.port);
    apiPath = base.pathname;
    clientId = published.clientId;
  });
  after(async () => {
    await platform.close();
    await new Promise<void>((resolve) => backendServer.close(() => resolve()));
  });

  /** GET with the path sent byte for byte (fetch would resolve `\` and dot segments first). */
  function get(path: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const headers = { 'X-IBM-Client-Id': clientId };
      const req = request({ host: '127.0.0.1', port: gatewayPort, path: `${apiPath}${path}`, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** Sends `path` and returns the answer and what the backend received meanwhile. */
  async function call(path: string): Promise<{ answer: Answer; backendSaw: string[] }> {
    const before = received.length;
    const answer = await get(path);
    return { answer, backendSaw: received.slice(before) };
  }

  test('encoded ../ in a path parameter (..%2f..%2fsecret%2fadmin) is refused with 400 before routing', async () => {
    const { answer, backendSaw } = await call('/echo/..%2f..%2fsecret%2fadmin');
    assert.deepEqual(backendSaw, []);
    assert.equal(answer.status, 400);
    assert.equal(answer.body.httpCode, '400');
    assert.match(answer.body.moreInformation ?? '', /^The request path is not valid: it contains a dot segment/);
  });

  test('a query parameter holding ../../secret/admin, in the path by $(request.parameters.v): 400', async () => {
    const { answer, backendSaw } = await call('/param?v=..%2F..%2Fsecret%2Fadmin');
    assert.deepEqual(backendSaw, []);
    assert.equal(answer.status, 400);
    const reason = /\$\(request\.parameters\.v\) cannot be used in the backend URL: it contains a dot segment/;
    assert.match(answer.body.moreInformation ?? '', reason);
  });

  test('backslashes in the request path ($(request.path)) are refused with 400, raw or encoded', async () => {
    for (const path of ['/raw/..\\..\\..\\..\\secret\\admin', '/raw/..%5c..%5c..%5c..%5csecret', '/raw/a%255cb']) {
      const { answer, backendSaw } = await call(path);
      assert.deepEqual(backendSaw, [], path);
      assert.equal(answer.status, 400, path);
      assert.match(answer.body.moreInformation ?? '', /^The request path is not valid: it contains a backslash/, path);
    }
  });

  test('encoded dot segments in the request path are refused with 400 in every form', async () => {
    for (const path of ['/raw/%2e%2e', '/raw/%2E.', '/raw/%252e%252e', '/raw/%c0%ae%c0%ae', '/echo/.%2e/x']) {
      const { answer, backendSaw } = await call(path);
      assert.deepEqual(backendSaw, [], path);
      assert.equal(answer.status, 400, path);
    }
  });

  test('ordinary values still reach the backend under the target path', async () => {
    assert.deepEqual((await call('/echo/a%20b')).backendSaw, ['/echo/a%20b/end']);
    assert.deepEqual((await call('/param?v=x.y')).backendSaw, ['/echo/x.y/end']);
    assert.deepEqual((await call('/raw/item-1')).backendSaw, ['/echo/urls/raw/item-1']);
  });

  test('a query value holding ../ stays one query value', async () => {
    const { answer, backendSaw } = await call('/query?v=..%2F..%2Fsecret%26admin%3D1');
    assert.equal(answer.status, 200);
    assert.deepEqual(backendSaw, ['/q?to=..%2F..%2Fsecret%26admin%3D1']);
  });

  test('dynamic routing: set-variable target-url to a whole URL, then invoke $(target-url)', async () => {
    const { answer, backendSaw } = await call('/dynamic');
    assert.equal(answer.status, 200);
    assert.deepEqual(backendSaw, ['/dynamic/set']);
  });

  test("dynamic routing: a GatewayScript's context.set('target-url', …), then $(target-url)/orders/…", async () => {
    const { answer, backendSaw } = await call('/scripted?id=42');
    assert.equal(answer.status, 200);
    assert.deepEqual(backendSaw, ['/dynamic/script/orders/42']);
    const escape = await call('/scripted?id=..%2F..%2Fadmin');
    assert.deepEqual(escape.backendSaw, []);
    assert.equal(escape.answer.status, 400);
  });

  test('an API property holding the base URL (substituted at publish) routes under it', async () => {
    assert.deepEqual((await call('/props/abc')).backendSaw, ['/from-property/props/abc']);
  });

  test('a dynamic target that is not http(s) is refused with 502, naming the variable', async () => {
    const { answer, backendSaw } = await call('/ftp');
    assert.deepEqual(backendSaw, []);
    assert.equal(answer.status, 502);
    const reason = /^The backend URL is not valid: \$\(target-url\) holds a ftp: URL; only http and https are allowed/;
    assert.match(answer.body.moreInformation ?? '', reason);
  });
});
