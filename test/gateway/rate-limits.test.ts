import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

const redisUrl = process.env.PORTICO_TEST_REDIS ?? 'redis://127.0.0.1:6379';
const bin = fileURLToPath(new URL('../../bin/portico.js', import.meta.url));

const backends: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'memory', env: {} },
  { name: 'redis', env: { PORTICO_REDIS_URL: redisUrl } },
];

for (const backend of backends) {
  describe(`plan rate limits through the gateway, counters in ${backend.name}`, () => {
    let t: TestDemo;
    before(async () => {
      t = await startTestDemo(backend.env);
    });
    after(async () => {
      await t.close();
    });

    test('Silver admits 100 calls in the hour, shared by every operation, then answers 429', async () => {
      const app = await t.newApp('silver');
      const headers = { 'X-IBM-Client-Id': app.clientId };
      for (let i = 1; i <= 100; i++) {
        const path = i % 2 ? 'logistics/shipping?zip=90210' : 'logistics/stores?zip=90210';
        const response = await fetch(`${t.base}/${path}`, { headers });
        assert.equal(response.status, 200, `call ${i}`);
        assert.equal(response.headers.get('x-ratelimit-limit'), 'name=default,100;');
        assert.equal(response.headers.get('x-ratelimit-remaining'), `name=default,${100 - i};`);
        assert.equal(response.headers.get('ratelimit-policy'), '"default";q=100;w=3600');
        assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${100 - i};t=\\d+$`));
        await response.arrayBuffer();
      }
      const over = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
      assert.equal(over.status, 429);
      assert.deepEqual(await over.json(), {
        httpCode: '429',
        httpMessage: 'Too Many Requests',
        moreInformation: 'Rate Limit exceeded',
      });
      const retryAfter = Number(over.headers.get('retry-after'));
      assert.ok(retryAfter > 0 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
      assert.equal(over.headers.get('x-ratelimit-remaining'), 'name=default,0;');
    });

    test('Gold is unlimited: more than 100 calls pass', async () => {
      const app = await t.newApp('gold');
      const headers = { 'X-IBM-Client-Id': app.clientId };
      const statuses = await Promise.all(
        Array.from({ length: 120 }, () =>
          fetch(`${t.base}/logistics/stores?zip=90210`, { headers }).then(
            async (r) => (await r.arrayBuffer(), r.status),
          ),
        ),
      );
      assert.deepEqual([...new Set(statuses)], [200]);
    });

    test('concurrent calls never exceed the limit', async () => {
      const app = await t.newApp('silver');
      const headers = { 'X-IBM-Client-Id': app.clientId };
      const statuses = await Promise.all(
        Array.from({ length: 160 }, () =>
          fetch(`${t.base}/logistics/stores?zip=90210`, { headers }).then(
            async (r) => (await r.arrayBuffer(), r.status),
          ),
        ),
      );
      assert.equal(statuses.filter((s) => s === 200).length, 100);
      assert.equal(statuses.filter((s) => s === 429).length, 60);
    });
  });
}

/** Starts `portico serve --role gateway` on the store and Redis; resolves with its URL. */
function startGatewayProcess(databaseUrl: string, dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--role', 'gateway'], {
    env: {
      PATH: process.env.PATH ?? '',
      PORTICO_DATABASE_URL: databaseUrl,
      PORTICO_REDIS_URL: redisUrl,
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_DATA_DIR: dataDir,
      PORTICO_LOG_LEVEL: 'warn',
      PORTICO_DRAIN_SECONDS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`gateway did not start: ${output}`)), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /^gateway\s+(http:\/\/[^/\s]+)/m.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}: ${output}`)));
  });
}

describe('two gateway processes sharing Redis', () => {
  let t: TestDemo;
  const children: ChildProcess[] = [];
  before(async () => {
    t = await startTestDemo({ PORTICO_REDIS_URL: redisUrl });
  });
  after(async () => {
    const exits = children
      .filter((child) => child.exitCode === null && child.signalCode === null)
      .map((child) => new Promise((resolve) => child.once('exit', resolve)));
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(exits);
    await t.close();
  });

  test('never admit more than the plan limit together under concurrent load', async () => {
    const app = await t.newApp('silver');
    const settings = t.handle.platform.settings;
    const gateways = await Promise.all(
      [0, 1].map(() => startGatewayProcess(settings.databaseUrl, join(settings.dataDir, 'gw'))),
    );
    children.push(...gateways.map((g) => g.child));
    const headers = { 'X-IBM-Client-Id': app.clientId };
    const statuses = await Promise.all(
      Array.from({ length: 180 }, (_, i) =>
        fetch(`${gateways[i % 2].url}/demo/sandbox/logistics/stores?zip=90210`, { headers }).then(
          async (r) => (await r.arrayBuffer(), r.status),
        ),
      ),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 100, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 80);
  });
});
