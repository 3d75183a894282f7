/**
 * Issue 15, item 6: a SIGTERMed gateway drains without dropping a call. Two gateway processes sit
 * behind a tiny round-robin balancer (written here) that checks each node's `/ready` on its
 * status listener, as a load balancer does; one node is stopped under load.
 */
import assert from 'node:assert/strict';
import { Agent, createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ProviderServices as Services } from '../../src/services/provider-services.ts';
import { startPortico } from '../helpers/processes.ts';
import type { PorticoProcess } from '../helpers/processes.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const backendDelayMs = 20;

const apiText = (target: string) => `swagger: '2.0'
info: {title: work, x-ibm-name: work, version: 1.0.0}
basePath: /work
security: []
paths: {/item: {get: {responses: {'200': {description: the item}}}}}
x-ibm-configuration: {assembly: {execute: [{invoke: {target-url: '${target}/item'}}]}}
`;

const productText = `product: 1.0.0
info: {name: work-product, title: Work, version: 1.0.0}
plans: {default: {title: Default}}
apis: {work: {name: 'work:1.0.0'}}
`;

interface Node {
  process: PorticoProcess;
  gateway: URL;
  status: string;
  ready: boolean;
}

/** Round robin over the nodes whose last `/ready` check answered 200; every 250 ms, as a balancer checks now and then. */
function startBalancer(nodes: Node[]): { server: Server; errors: string[]; stop(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const errors: string[] = [];
  let next = 0;
  const check = setInterval(() => {
    for (const node of nodes) {
      fetch(`${node.status}/ready`, { signal: AbortSignal.timeout(1000) })
        .then(async (response) => {
          await response.arrayBuffer();
          node.ready = response.status === 200;
        })
        .catch(() => (node.ready = false));
    }
  }, 250);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const ready = nodes.filter((node) => node.ready);
    const node = ready[next++ % ready.length];
    if (node === undefined) {
      errors.push('no node ready');
      res.writeHead(502).end();
      return;
    }
    const upstream = request(
      { host: node.gateway.hostname, port: node.gateway.port, path: req.url, method: req.method, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      errors.push(`${error.code ?? error.message} from ${node.gateway.port}`);
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return {
    server,
    errors,
    stop() {
      clearInterval(check);
      agent.destroy();
    },
  };
}

describe('drain under load', () => {
  let db: TestStore;
  let nodes: Node[] = [];
  const backend = createServer((_req, res) =>
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), backendDelayMs),
  );

  before(async () => {
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    db = await sqliteTestStore();
    const services = new Services(db.store);
    const { orgId } = await services.ensureOrg('acme');
    const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    await services.importApi(orgId, { text: apiText(target), file: 'work.yaml', state: 'online' });
    await services.putProduct(orgId, 'sandbox', {
      text: productText,
      file: 'work-product.yaml',
      state: 'published',
    });
    const env = { PORTICO_DATABASE_URL: db.url, PORTICO_DRAIN_SECONDS: '1' };
    const started = await Promise.all(
      [0, 1].map(() => startPortico(['serve', '--role', 'gateway'], env, ['gateway', 'status'])),
    );
    nodes = started.map((process) => ({
      process,
      gateway: new URL(process.urls.gateway),
      status: process.urls.status,
      ready: true,
    }));
  });
  after(async () => {
    await Promise.all(nodes.map((node) => node.process.stop('SIGKILL')));
    await db?.dispose();
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  });

  test('one node SIGTERMed under load: 0 client errors, the other takes over', async () => {
    const balancer = startBalancer(nodes);
    await new Promise<void>((resolve) => balancer.server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(balancer.server.address() as AddressInfo).port}/acme/sandbox/work/item`;
    const clientAgent = new Agent({ keepAlive: true, maxSockets: 16 });
    const statuses = new Map<number | string, number>();
    let running = true;
    const call = () =>
      new Promise<void>((resolve) => {
        const req = request(url, { agent: clientAgent }, (res) => {
          res.resume();
          res.on('end', () => {
            statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
            resolve();
          });
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          statuses.set(error.code ?? 'error', (statuses.get(error.code ?? 'error') ?? 0) + 1);
          resolve();
        });
        req.end();
      });
    const loop = async () => {
      while (running) await call();
    };
    const load = Promise.all(Array.from({ length: 16 }, loop));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stopping = nodes[0];
    await stopping.process.stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    running = false;
    await load;
    balancer.stop();
    clientAgent.destroy();
    await new Promise((resolve) => balancer.server.close(resolve));

    assert.equal(stopping.process.child.exitCode, 0, stopping.process.output());
    assert.deepEqual(balancer.errors, []);
    assert.deepEqual([...statuses.keys()], [200], `answers: ${JSON.stringify([...statuses])}`);
    assert.ok((statuses.get(200) ?? 0) > 100, `${statuses.get(200)} calls answered`);
  });
});
