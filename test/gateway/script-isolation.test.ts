/**
 * Issue 12, findings 3, 4, 8 and 11 through a real gateway: one consumer's calls to a script
 * cannot hang the process, switch off other scripts, stall other APIs, or leak state to the next
 * caller. A product "scripts" holds two script APIs (attack, victim); the Accessories product's
 * financing API (no script) is the unrelated API that must answer within 100 ms throughout.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

const productText = readFileSync(
  new URL('../../examples/accessories/accessories-product.yaml', import.meta.url),
  'utf8',
);

function scriptApi(name: string, source: string): string {
  return JSON.stringify({
    swagger: '2.0',
    info: { title: name, 'x-ibm-name': name, version: '1.0.0' },
    basePath: `/${name}`,
    securityDefinitions: { clientID: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
    security: [{ clientID: [] }],
    paths: { '/run': { post: { responses: { 200: { description: 'ok' } } } } },
    'x-ibm-configuration': {
      assembly: { execute: [{ gatewayscript: { version: '2.0.0', title: `${name}-script`, source } }] },
    },
  });
}

// Which attack runs is chosen by the query; each is one of the reproductions.
const attackSource = `
var mode = context.get('request.parameters.mode') || String(context.get('request.search')).replace(/^\\?mode=/, '');
if (mode === 'spin') { while (true) {} }
if (mode === 'storm') { async function f() { await null; f(); f(); } f(); }
if (mode === 'parse') { context.message.body.readAsJSON(function (error, value) { context.message.body.write({ ok: !error }); }); }
if (mode === 'stringify') { var o = {}; for (var i = 0; i < 100000; i++) o = { a: o }; JSON.stringify(o); }
if (mode === 'pin') { Object.defineProperty(globalThis, 'pinned', { value: context.get('request.headers.x-caller'), configurable: false }); }
if (mode === 'peek') { context.message.body.write({ seen: typeof pinned === 'undefined' ? null : pinned }); }
if (mode === 'ok') { context.message.body.write({ ok: true }); }
if (mode === 'pool') { context.set('p', true); context.message.body.write({ ok: context.get('p') }); }
`;
const victimSource = `context.message.body.write({ victim: 'served' });`;

describe('issue 12: GatewayScript isolation through the gateway', () => {
  let t: TestDemo;
  let headers: Record<string, string>;
  let financing: () => Promise<number>;

  before(async () => {
    t = await startTestDemo({ PORTICO_SCRIPT_TIMEOUT_MS: '1000', PORTICO_SCRIPT_WORKERS: '2' });
    const services = t.handle.platform.services;
    await services.importApi(t.orgId, {
      text: scriptApi('attack', attackSource),
      file: 'attack.json',
      state: 'online',
    });
    await services.importApi(t.orgId, {
      text: scriptApi('victim', victimSource),
      file: 'victim.json',
      state: 'online',
    });
    const scripts = productText
      .replace(/name: accessories/, 'name: scripts')
      .replace(/title: Accessories/, 'title: Scripts')
      .replace(/apis:[\s\S]*$/, "apis:\n  attack:\n    name: 'attack:1.0.0'\n  victim:\n    name: 'victim:1.0.0'\n");
    await services.putProduct(t.orgId, 'sandbox', {
      text: scripts,
      file: 'scripts.yaml',
      state: 'published',
    });
    const scriptsApp = await t.newApp('silver', { product: 'scripts' });
    const accessoriesApp = await t.newApp('silver');
    headers = { 'X-IBM-Client-Id': scriptsApp.clientId, 'content-type': 'application/json' };
    const financingUrl = `${t.base}/financing/calculate?amount=1000&duration=12&rate=4.5`;
    financing = async () => {
      const started = performance.now();
      const response = await fetch(financingUrl, { headers: { 'X-IBM-Client-Id': accessoriesApp.clientId } });
      await response.arrayBuffer();
      assert.ok(response.status < 500, `financing answered ${response.status}`);
      return performance.now() - started;
    };
    await financing();
    assert.equal((await attack('ok')).status, 200);
    // A short script runs on the gateway thread (inline.ts); a read after a write goes to the
    // pool, so the workers are up before the attacks.
    assert.equal((await attack('pool')).status, 200);
    // Both workers compile the victim's script before the attacks (when it reaches the pool).
    await Promise.all([victim(), victim()]);
  });
  after(async () => {
    await t.close();
  });

  function attack(mode: string, body = '{}', caller = 'a'): Promise<Response> {
    return fetch(`${t.base}/attack/run?mode=${mode}`, {
      method: 'POST',
      headers: { ...headers, 'x-caller': caller },
      body,
    });
  }

  async function victim(): Promise<Response> {
    return fetch(`${t.base}/victim/run`, { method: 'POST', headers, body: '{}' });
  }

  /** Runs `calls` while sampling the financing API every 50 ms; returns the slowest answer. */
  async function slowestDuring(calls: Promise<unknown>): Promise<number> {
    let done = false;
    let slowest = 0;
    const sampling = (async () => {
      while (!done) {
        slowest = Math.max(slowest, await financing());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await calls;
    done = true;
    await sampling;
    return slowest;
  }

  test('finding 3: an async storm ends at the time limit, and other APIs answer within 100 ms during and after', async () => {
    let status = 0;
    const slowest = await slowestDuring(
      attack('storm').then(async (r) => {
        status = r.status;
        await r.arrayBuffer();
      }),
    );
    assert.equal(status, 500);
    assert.ok(slowest < 100, `financing took ${slowest.toFixed(0)} ms during the storm`);
    assert.ok((await financing()) < 100);
    assert.equal((await attack('ok')).status, 200);
  });

  test("finding 8: ten parallel spins to the 1 s limit never delay another API by 100 ms, and another API's script still runs", async () => {
    const spins = Array.from({ length: 10 }, () =>
      attack('spin').then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    // Without the per-API cap the victim would wait for a spin to end (≥ 1 s).
    const served = await victim();
    assert.equal(served.status, 200);
    assert.deepEqual(await served.json(), { victim: 'served' });
    assert.ok(performance.now() - started < 800, 'the victim API found a worker the attacker could not take');
    const slowest = await slowestDuring(Promise.all(spins));
    assert.ok(slowest < 100, `financing took ${slowest.toFixed(0)} ms during the spins`);
    const statuses = await Promise.all(spins);
    assert.ok(
      statuses.every((s) => s === 500 || s === 503),
      `spins answered ${statuses.join(',')}`,
    );
    assert.ok(statuses.includes(503), 'runs queued past their own time limit were refused with 503');
    assert.ok((await financing()) < 100);
  });

  test('finding 4: 40 deep [[[… bodies and 5 deep stringify runs do not switch off the scripts', async () => {
    const deep = '['.repeat(100_000);
    for (let i = 0; i < 40; i++) {
      const response = await attack('parse', deep);
      await response.arrayBuffer();
      assert.ok(response.status !== 0);
    }
    for (let i = 0; i < 5; i++) await (await attack('stringify')).arrayBuffer();
    const ok = await attack('ok');
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { ok: true });
    assert.equal((await victim()).status, 200);
    assert.ok((await financing()) < 100);
  });

  test('finding 11: a non-configurable global set by one consumer is not seen by the next', async () => {
    await (await attack('pin', '{}', 'consumer-a')).arrayBuffer();
    for (let i = 0; i < 4; i++) {
      const peek = await attack('peek', '{}', 'consumer-b');
      assert.equal(peek.status, 200);
      assert.deepEqual(await peek.json(), { seen: null });
    }
  });
});
