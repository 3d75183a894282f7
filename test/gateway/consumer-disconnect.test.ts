/**
 * A consumer that closes its connection before the answer: the backend call made for it ends (its
 * connection closes), the flow calls no further backend, nothing is written back, and the activity
 * log records 499 `ConsumerClosedError` (nginx's "client closed request").
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { listEvents } from '../../src/store/analytics.ts';
import type { ActivityEvent } from '../../src/store/schema.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const backendDelayMs = 2000;

/** A backend that answers after `delayMs`, and notes each call and each connection closed unanswered. */
function backendServer(delayMs: number) {
  const calls: string[] = [];
  const closedUnanswered: number[] = [];
  const server = createServer((req, res) => {
    calls.push(req.url ?? '');
    req.resume();
    const timer = setTimeout(
      () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"late":true}'),
      delayMs,
    );
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) closedUnanswered.push(Date.now());
    });
  });
  return { server, calls, closedUnanswered };
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

function apiText(name: string, execute: string, extra = ''): string {
  return `swagger: '2.0'
info:
  title: ${name}
  x-ibm-name: ${name}
  version: 1.0.0
basePath: /${name}
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
${execute}${extra}`;
}

const productText = `product: 1.0.0
info:
  name: leaving-product
  title: Leaving
  version: 1.0.0
plans:
  default:
    title: Default
apis:
  slow:
    name: 'slow:1.0.0'
  chain:
    name: 'chain:1.0.0'
`;

/** Sends a GET on a raw connection and destroys it 100 ms after the backend has the call; resolves then. */
async function leaveDuringTheCall(gateway: string, path: string, calls: string[]): Promise<number> {
  const { hostname, port } = new URL(gateway);
  const before = calls.length;
  const socket = connect(Number(port), hostname);
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: gateway\r\n\r\n`);
  while (calls.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
  return Date.now();
}

/** The activity event of the next call to `api` after `seen` events were recorded for it. */
async function nextEvent(t: TestPlatform, api: string, seen: number): Promise<ActivityEvent> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const events = await listEvents(t.platform.store.db, {}, 500);
    const forApi = events.filter((event) => event.api_name === api);
    if (forApi.length > seen) return forApi[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no new activity event for ${api}`);
}

async function eventCount(t: TestPlatform, api: string): Promise<number> {
  return (await listEvents(t.platform.store.db, {}, 500)).filter((event) => event.api_name === api).length;
}

describe('a consumer that closes its connection before the answer', () => {
  let t: TestPlatform;
  const first = backendServer(backendDelayMs);
  const second = backendServer(0);
  let firstUrl: string;

  before(async () => {
    firstUrl = await listen(first.server);
    const secondUrl = await listen(second.server);
    t = await startTestPlatform({ role: 'all' });
    const slow = `      - invoke:
          target-url: '${firstUrl}/item'
`;
    // The first answer goes to a variable with stop-on-error empty: a failing first call alone
    // would let the flow go on to the second, and a default catch would call the second backend too.
    const chain = `      - invoke:
          target-url: '${firstUrl}/first'
          output: first_response
      - invoke:
          target-url: '${secondUrl}/second'
`;
    const catchAll = `    catch:
      - default:
          - invoke:
              target-url: '${secondUrl}/caught'
`;
    for (const [name, text] of [
      ['slow', apiText('slow', slow)],
      ['chain', apiText('chain', chain, catchAll)],
    ]) {
      await t.platform.services.importApi(t.orgId, { text, file: `${name}.yaml`, state: 'online' });
    }
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'leaving-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
  });
  after(async () => {
    await t.close();
    await close(first.server);
    await close(second.server);
  });

  test('ends the backend call at once, and the activity log records 499 ConsumerClosedError', async () => {
    const seen = await eventCount(t, 'slow');
    const closedBefore = first.closedUnanswered.length;
    const left = await leaveDuringTheCall(t.gateway, '/acme/sandbox/slow/item', first.calls);
    while (first.closedUnanswered.length === closedBefore && Date.now() - left < backendDelayMs + 1000)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(first.closedUnanswered.length, closedBefore + 1, "the backend saw its call's connection close");
    const closedAfterMs = first.closedUnanswered.at(-1)! - left;
    assert.ok(closedAfterMs < 1500, `the backend's connection closed ${closedAfterMs} ms after the consumer left`);
    const event = await nextEvent(t, 'slow', seen);
    assert.equal(event.status, 499);
    assert.equal(event.error_name, 'ConsumerClosedError');
  });

  test('calls no further backend in the flow, not even from its default catch', async () => {
    const seen = await eventCount(t, 'chain');
    const secondCalls = second.calls.length;
    await leaveDuringTheCall(t.gateway, '/acme/sandbox/chain/item', first.calls);
    // The event is recorded once the flow has ended: whatever it called, it has called by then.
    const event = await nextEvent(t, 'chain', seen);
    assert.deepEqual(second.calls.slice(secondCalls), [], 'the second backend received no request');
    assert.equal(event.status, 499);
    assert.equal(event.error_name, 'ConsumerClosedError');
  });

  test('a consumer that leaves in the middle of its upload is recorded as 499, not as a 500', async () => {
    const seen = await eventCount(t, 'slow');
    const calls = first.calls.length;
    const { hostname, port } = new URL(t.gateway);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    socket.write('GET /acme/sandbox/slow/item HTTP/1.1\r\nHost: gateway\r\nContent-Length: 100000\r\n\r\n0123456789');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    const event = await nextEvent(t, 'slow', seen);
    assert.equal(event.status, 499);
    assert.equal(event.error_name, 'ConsumerClosedError');
    assert.equal(first.calls.length, calls, 'the flow never ran');
  });

  test('a consumer that stays gets its answer, and no backend call is ended early', async () => {
    const seen = await eventCount(t, 'slow');
    const closedBefore = first.closedUnanswered.length;
    const response = await fetch(`${t.gateway}/acme/sandbox/slow/item`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), '{"late":true}');
    assert.equal(first.closedUnanswered.length, closedBefore);
    const event = await nextEvent(t, 'slow', seen);
    assert.equal(event.status, 200);
    assert.ok(!event.error_name, `no error name, got ${event.error_name}`);
  });
});
