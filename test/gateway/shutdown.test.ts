import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const backendDelayMs = 400;

function slowApiText(backend: string): string {
  return `swagger: '2.0'
info:
  title: slow
  x-ibm-name: slow
  version: 1.0.0
basePath: /slow
security: []
paths:
  /item:
    get:
      responses:
        '200':
          description: the item
x-ibm-configuration:
  assembly:
    execute:
      - invoke:
          target-url: '${backend}/item'
`;
}

const productText = `product: 1.0.0
info:
  name: slow-product
  title: Slow
  version: 1.0.0
plans:
  default:
    title: Default
apis:
  slow:
    name: 'slow:1.0.0'
`;

describe('gateway stop', () => {
  let t: TestPlatform;
  let arrived = 0;
  const backend = createServer((_req, res) => {
    arrived++;
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"slow":true}'), backendDelayMs);
  });
  before(async () => {
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    t = await startTestPlatform({ role: 'all' });
    const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    await t.platform.services.importApi(t.orgId, {
      text: slowApiText(url),
      file: 'slow.yaml',
      state: 'online',
    });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'slow-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  });

  test('counts each answer in /metrics', async () => {
    const response = await fetch(`${t.gateway}/acme/sandbox/slow/item`);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const metrics = await (await fetch(`${t.status}/metrics`)).text();
    const labels = 'org="acme",catalog="sandbox",api="slow",version="1\\.0\\.0"';
    assert.match(metrics, new RegExp(`^portico_gateway_requests_total\\{${labels},status="200"\\} 1$`, 'm'));
    assert.match(metrics, new RegExp(`^portico_gateway_request_duration_seconds_count\\{${labels}\\} 1$`, 'm'));
  });

  test('lets the requests in flight finish, then stops', async () => {
    const url = `${t.gateway}/acme/sandbox/slow/item`;
    const inFlight = Array.from({ length: 5 }, () =>
      fetch(url).then(async (response) => ({ status: response.status, body: await response.text() })),
    );
    // In flight = at the backend: a request the gateway has not read yet is not in flight.
    const before = arrived;
    while (arrived < before + inFlight.length) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    await t.close();
    const answers = await Promise.all(inFlight);
    assert.deepEqual(
      answers,
      answers.map(() => ({ status: 200, body: '{"slow":true}' })),
    );
    assert.ok(performance.now() - started >= backendDelayMs / 2, 'the stop waited for the answers');
    await assert.rejects(fetch(url), 'the gateway no longer accepts connections');
  });
});
