import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startDemo } from '../../src/cli/demo.ts';
import type { DemoHandle } from '../../src/cli/demo.ts';
import { loadSettings } from '../../src/config/config.ts';
import { latestChange } from '../../src/store/changes.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import { startPortico } from '../helpers/processes.ts';
import { awaitRoomInWindow } from '../ratelimit/helpers.ts';
import type { PorticoProcess } from '../helpers/processes.ts';

describe('serve --workers 2 without Redis', () => {
  let dataDir: string;
  let demo: DemoHandle;
  let node: PorticoProcess;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'portico-workers-'));
    // The demo sets up the catalog and its sample backends in this process, on a SQLite file
    // the worker cluster then serves from.
    const settings = loadSettings(
      {
        PORTICO_GATEWAY_PORT: '0',
        PORTICO_PORTAL_PORT: '0',
        PORTICO_MANAGEMENT_PORT: '0',
        PORTICO_DRAIN_SECONDS: '0',
      },
      { dataDir },
    );
    demo = await startDemo(settings, pino({ level: 'silent' }), {
      financing: 0,
      shipping: 0,
      geocoder: 0,
      inventory: 0,
    });
    // A node flag of the operator's own, which the workers must keep beside the gateway's.
    node = await startPortico(
      ['serve', '--role', 'gateway', '--workers', '2', '--data-dir', dataDir],
      {},
      ['gateway', 'status'],
      ['--stack-trace-limit=20'],
    );
  });
  after(async () => {
    await node?.stop();
    await demo?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The primary's cluster workers and their command lines (tsx's esbuild service is a child too). */
  function workers(): Array<{ pid: number; args: string[] }> {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(node.child.pid)], { encoding: 'utf8' })
      .trim()
      .split(/\s+/)
      .map(Number)
      .flatMap((pid) => {
        let args: string[];
        try {
          args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        } catch {
          return []; // gone since ps listed it
        }
        return args.some((arg) => arg.endsWith('portico.js')) ? [{ pid, args }] : [];
      });
  }

  test('the workers share one port and together admit exactly the plan limit', async () => {
    assert.match(node.output(), /\(2 workers\)/);
    const services = demo.platform.services;
    const consumerServices = demo.platform.consumerServices;
    const { orgId, sandbox } = await services.ensureOrg('demo');
    await consumerServices.signUp(sandbox.id, {
      email: 'workers@example.com',
      password: 'dev-pass-1234',
      orgTitle: 'Workers',
    });
    const org = (await findConsumerOrgByName(services.store.db, sandbox.id, 'workers'))!;
    const { app, credential } = await consumerServices.createApp(org.id, { title: 'Workers App' });
    const product = await services.product(orgId, 'sandbox', 'accessories', '1.0.0');
    await consumerServices.subscribe(org.id, { appId: app.id, productId: product.id, planName: 'silver' });
    const url = `${node.urls.gateway}/demo/sandbox/logistics/stores?zip=90210`;
    const headers = { 'X-IBM-Client-Id': credential.client_id };
    // The workers learn of the new subscription by polling the store's change counter; /ready
    // says which change a worker's snapshot reflects, and asking it counts against no plan.
    const latest = await latestChange(services.store.db);
    const deadline = Date.now() + 10_000;
    let current = 0;
    while (Date.now() < deadline && current < 12) {
      const ready = (await (await fetch(`${node.urls.status}/ready`, { headers: { connection: 'close' } })).json()) as {
        change: number;
      };
      current = ready.change >= latest ? current + 1 : 0;
      if (current === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(current, 12, 'both workers reflect the new subscription');
    // 100/hour counts in windows aligned on the hour: a load that ran across hh:00 could rightly admit 200.
    await awaitRoomInWindow(3_600_000, 60_000);
    const statuses = await Promise.all(
      Array.from({ length: 150 }, () =>
        fetch(url, { headers: { ...headers, connection: 'close' } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        ),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 100, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 50);
  });

  test("each worker runs with V8's memory reducer off (issue 18), the primary's own node flags kept", async () => {
    const running = workers();
    assert.equal(running.length, 2);
    for (const { args } of running) {
      assert.ok(args.includes('--no-memory-reducer'), args.join(' '));
      assert.ok(args.includes('--stack-trace-limit=20'), `the primary's flag is missing: ${args.join(' ')}`);
    }
  });

  test('a worker that dies is logged once with its own pid under workerPid (issue 15, item 7)', async () => {
    const pids = workers().map(({ pid }) => pid);
    assert.equal(pids.length, 2);
    process.kill(pids[0], 'SIGKILL');
    const deadline = Date.now() + 5000;
    let line: string | undefined;
    while (line === undefined && Date.now() < deadline) {
      line = node
        .output()
        .split('\n')
        .find((text) => text.includes('gateway worker died'));
      if (line === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(line, node.output());
    assert.equal(line.match(/"pid":/g)?.length, 1, line);
    const fields = JSON.parse(line) as { pid: number; workerPid: number; signal: string };
    assert.deepEqual([fields.pid, fields.workerPid, fields.signal], [node.child.pid, pids[0], 'SIGKILL']);
  });
});
