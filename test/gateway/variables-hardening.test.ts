/**
 * Issue 12, findings 2 and 7, through a real gateway with two provider organizations: one
 * tenant's GatewayScript must not change what another tenant's APIs see (prototype
 * pollution), and must not leave memory behind in the gateway process (path cache,
 * `api.properties`).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform } from '../../src/platform.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after full collections, in MiB. */
function heapMiB(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

let serial = 0;

/** Imports an open API (no security) in `org`, brings it online and publishes it in a product. */
async function publish(platform: Platform, orgId: string, document: Record<string, unknown>): Promise<void> {
  const services = platform.services;
  const imported = await services.importApi(orgId, {
    text: JSON.stringify(document),
    file: 'api.json',
    replace: true,
  });
  await services.setApiState(orgId, imported.api.name, imported.api.version, 'online');
  const product = `vars-product-${++serial}`;
  const text = [
    'product: 1.0.0',
    `info: { name: ${product}, title: ${product}, version: 1.0.0 }`,
    'visibility: { view: { type: public, enabled: true }, subscribe: { type: authenticated, enabled: true } }',
    'plans: { default: { title: Default, approval: false } }',
    `apis: { api: { name: '${imported.api.name}:${imported.api.version}' } }`,
  ].join('\n');
  await services.putProduct(orgId, 'sandbox', { text, file: `${product}.yaml`, state: 'published' });
}

function api(
  name: string,
  paths: Record<string, unknown[]>,
  extra: Record<string, unknown> = {},
  catches?: unknown[],
): Record<string, unknown> {
  const operations: Record<string, unknown> = {};
  const cases = Object.entries(paths).map(([path, execute]) => {
    operations[path] = { get: { operationId: path.slice(1), responses: { 200: { description: 'ok' } } } };
    return { operations: [path.slice(1)], execute };
  });
  return {
    swagger: '2.0',
    info: { title: name, version: '1.0.0', 'x-ibm-name': name },
    basePath: `/${name}`,
    paths: operations,
    'x-ibm-configuration': {
      ...extra,
      assembly: {
        execute: [{ 'operation-switch': { version: '1.0.0', title: 'by operation', case: cases } }],
        ...(catches ? { catch: catches } : {}),
      },
    },
  };
}

const script = (source: string) => ({ gatewayscript: { version: '2.0.0', title: 'script', source } });

describe("issue 12: one tenant cannot change another tenant's context or the gateway's memory", () => {
  let platform: Platform;
  let dataDir: string;
  let backend: Server;
  const received: IncomingHttpHeaders[] = [];
  let victim: string;
  let attacker: string;

  before(async () => {
    backend = createServer((req, res) => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"from":"backend"}');
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as { port: number }).port;
    dataDir = mkdtempSync(join(tmpdir(), 'portico-vars-'));
    // A generous script time limit: the 12 MiB names take a while to cross on a shared machine.
    const settings = loadSettings(
      {
        PORTICO_GATEWAY_PORT: '0',
        PORTICO_MANAGEMENT_PORT: '0',
        PORTICO_PORTAL_PORT: '0',
        PORTICO_SCRIPT_TIMEOUT_MS: '10000',
      },
      { dataDir },
    );
    platform = await startPlatform(settings, pino({ level: 'silent' }), 'gateway');
    const services = platform.services;
    const tenantA = await services.ensureOrg('tenant-a', 'Tenant A');
    const tenantB = await services.ensureOrg('tenant-b', 'Tenant B');
    // Tenant A: gold callers get a canned answer; everyone else goes to the backend.
    await publish(
      platform,
      tenantA.orgId,
      api(
        'victim',
        {
          '/tier': [
            {
              switch: {
                version: '1.0.0',
                title: 'tier',
                case: [
                  {
                    condition: "$header('X-Tier') = 'gold'",
                    execute: [
                      {
                        'set-variable': {
                          version: '1.0.0',
                          actions: [{ set: 'message.body', value: 'gold' }],
                        },
                      },
                    ],
                  },
                  {
                    otherwise: [
                      {
                        invoke: {
                          version: '2.0.0',
                          title: 'backend',
                          'target-url': `http://127.0.0.1:${port}/echo`,
                        },
                      },
                    ],
                  },
                ],
              },
            },
          ],
        },
        { properties: { shared: { value: 'original' } } },
      ),
    );
    // Tenant B: scripts that try to reach Object.prototype and to leave memory behind.
    await publish(
      platform,
      tenantB.orgId,
      api(
        'attacker',
        {
          '/pollute': [
            script(`
        var refused = [];
        function attempt(label, action) { try { action(); } catch (e) { refused.push(label + ': ' + e.message); } }
        attempt('context.set', function () { context.set('__proto__.x-tier', 'gold'); });
        attempt('apim.setvariable', function () { apim.setvariable('__proto__.x-injected', 'yes'); });
        attempt('query', function () { context.set('__proto__.query', { a: 1 }); });
        attempt('constructor', function () { context.set('message.constructor.prototype.x-tier', 'gold'); });
        attempt('bracket', function () { context.set("message['__proto__']['x-tier']", 'gold'); });
        attempt('header bag', function () { context.set('message.headers.__proto__.x-tier', 'gold'); });
        attempt('clear', function () { context.clear('__proto__.toString'); });
        context.message.body.write({ refused: refused, read: context.get('__proto__') === undefined });`),
          ],
          '/names': [
            script(`
        var big = new Array(12 * 1024 * 1024 + 1).join('x') + context.get('request.headers.x-key'), refused = 0;
        for (var i = 0; i < 4; i++) { try { context.get(big + '.' + i); } catch (e) { refused++; } }
        context.message.body.write({ refused: refused });`),
          ],
          '/properties': [
            script(`
        var key = 'p' + context.get('request.headers.x-key');
        context.set('api.properties.' + key, new Array(4 * 1024 * 1024 + 1).join('y'));
        context.message.body.write({ own: context.get('api.properties.' + key).length, keys: Object.keys(context.get('api.properties')) });`),
          ],
          '/caught': [script(`context.set('constructor.prototype.x', 1);`)],
        },
        { properties: { shared: { value: 'original' } } },
        [
          {
            errors: ['JavaScriptError'],
            execute: [
              {
                'set-variable': {
                  version: '1.0.0',
                  actions: [{ set: 'message.body', value: 'caught $(error.name)' }],
                },
              },
            ],
          },
        ],
      ),
    );
    await platform.gateway!.reload();
    victim = `${platform.urls.gateway}/tenant-a/sandbox/victim`;
    attacker = `${platform.urls.gateway}/tenant-b/sandbox/attacker`;
  });

  after(async () => {
    await platform.close();
    await new Promise((resolve) => backend.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  });

  test("issue-12 finding 2: a script's writes through __proto__/constructor are exceptions and reach no other tenant", async () => {
    const attack = await fetch(`${attacker}/pollute`);
    assert.equal(attack.status, 200);
    const outcome = (await attack.json()) as { refused: string[]; read: boolean };

    // The other tenant's switch still takes the backend branch, the backend gets no injected
    // header, and invoke still works (the injected `query` made every invoke 502).
    received.length = 0;
    const call = await fetch(`${victim}/tier`);
    assert.equal(call.status, 200);
    assert.deepEqual(await call.json(), { from: 'backend' });
    assert.equal(received.length, 1);
    assert.equal(received[0]['x-tier'], undefined);
    assert.equal(received[0]['x-injected'], undefined);
    const gold = await fetch(`${victim}/tier`, { headers: { 'X-Tier': 'gold' } });
    assert.equal(await gold.text(), 'gold');

    assert.equal(
      outcome.refused.length,
      7,
      `every attempt is an exception in the script: ${outcome.refused.join('; ')}`,
    );
    assert.equal(outcome.read, true);
    for (const key of ['x-tier', 'x-injected', 'query', 'toString'])
      assert.equal(Object.hasOwn(Object.prototype, key), key === 'toString');
  });

  test('issue-12 finding 2: a refused write the script does not catch fails the policy, and a catch case sees it', async () => {
    const response = await fetch(`${attacker}/caught`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'caught JavaScriptError');
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'x'), false);
  });

  test('issue-12 finding 7: huge variable names are refused and leave nothing in the path cache', async () => {
    await (await fetch(`${attacker}/names`, { headers: { 'x-key': 'warm' } })).arrayBuffer();
    const start = heapMiB();
    const answers: Array<{ status: number; body: string }> = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${attacker}/names`, { headers: { 'x-key': String(i) } });
      answers.push({ status: response.status, body: await response.text() });
    }
    // 3 requests × 4 names of 12 MiB: the old cache kept every name and its segment (~288 MiB).
    const grown = heapMiB() - start;
    assert.ok(grown < 32, `heap grew by ${grown.toFixed(1)} MiB`);
    for (const answer of answers) assert.deepEqual(answer, { status: 200, body: '{"refused":4}' });
  });

  test('issue-12 finding 7: api.properties written by a request stay in that request (nothing accumulates)', async () => {
    await (await fetch(`${attacker}/properties`, { headers: { 'x-key': 'warm' } })).arrayBuffer();
    const start = heapMiB();
    const answers: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${attacker}/properties`, { headers: { 'x-key': String(i) } });
      answers.push({ status: response.status, body: await response.json() });
    }
    const grown = heapMiB() - start;
    assert.ok(grown < 16, `heap grew by ${grown.toFixed(1)} MiB over 6 requests writing 4 MiB each`);
    // Each request sees its own write, and only its own: the shared property and its key.
    const expected = Array.from({ length: 6 }, (_, i) => ({
      status: 200,
      body: { own: 4 * 1024 * 1024, keys: ['shared', `p${i}`] },
    }));
    assert.deepEqual(answers, expected);
    const compiled = platform
      .gateway!.current!.catalogs.get('tenant-b/sandbox')!
      .apis.find((entry) => entry.name === 'attacker')!;
    assert.deepEqual(Object.keys(compiled.properties), ['shared']);
  });
});
