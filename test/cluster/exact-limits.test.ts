/**
 * issue-15 "Done when": three gateway processes on one real Redis (a private redis-server) and
 * a Silver 100/hour subscription; bursts of 2,000 calls round robin over the nodes while one of
 * them is stopped (SIGSTOP) for 300 ms again and again. Admitted: exactly 100 in every burst.
 * `PORTICO_EXACT_RUNS` sets the number of bursts (3 by default; scripts/exact-limits.sh runs 10).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPrivateRedis } from '../ratelimit/private-redis.ts';
import type { PrivateRedis } from '../ratelimit/private-redis.ts';
import { latestChange } from '../../src/store/changes.ts';
import { startPortico } from '../helpers/processes.ts';
import type { PorticoProcess } from '../helpers/processes.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { startAccessories, within } from './accessories-cluster.ts';
import type { AccessoriesCluster } from './accessories-cluster.ts';

const runs = Number(process.env.PORTICO_EXACT_RUNS ?? 3);
const burst = 2000;
const concurrency = 200;
const path = '/demo/sandbox/logistics/stores?zip=90210';

/** Sends `total` calls round robin over `urls`, `concurrency` at a time; returns the statuses. */
async function sendBurst(urls: string[], headers: Record<string, string>, total: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const response = await fetch(`${urls[i % urls.length]}${path}`, {
        headers,
        signal: AbortSignal.timeout(30_000),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}

/** Stops `node` for 300 ms, lets it run 200 ms, again, until `done` resolves. */
async function stutter(node: PorticoProcess, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true));
  let stops = 0;
  while (!finished) {
    node.child.kill('SIGSTOP');
    stops++;
    await sleep(300);
    node.child.kill('SIGCONT');
    await sleep(200);
  }
  return stops;
}

describe('issue-15: exact plan limits across three gateway processes under stalls', () => {
  let db: TestStore;
  let redis: PrivateRedis;
  let cluster: AccessoriesCluster;
  let gateways: PorticoProcess[] = [];

  before(async () => {
    db = await postgresTestStore();
    redis = await startPrivateRedis();
    cluster = await startAccessories(db.url, db.store);
    const env = { PORTICO_DATABASE_URL: db.url, PORTICO_REDIS_URL: redis.url };
    const start = () => startPortico(['serve', '--role', 'gateway'], env, ['gateway', 'status']);
    gateways = await Promise.all([0, 1, 2].map(start));
  });

  after(async () => {
    for (const g of gateways) g.child.kill('SIGCONT');
    await Promise.all(gateways.map((g) => g.stop('SIGKILL')));
    await cluster?.close();
    await redis?.stop();
    await db?.dispose();
  });

  for (let run = 1; run <= runs; run++) {
    test(
      `burst ${run}: 2,000 calls, one node stopped 300 ms at a time: exactly 100 admitted`,
      { timeout: 120_000 },
      async () => {
        const app = await cluster.newApp('silver', `Exact${run}`);
        const headers = { 'X-IBM-Client-Id': app.clientId };
        const urls = gateways.map((g) => g.urls.gateway);
        // Every node knows the subscription before the burst (a 401 would not be a rate-limit answer).
        // /ready is on each node's status listener.
        const change = await latestChange(db.store.db);
        await within(5000, async () => {
          const readyOf = async (g: PorticoProcess) => {
            const response = await fetch(`${g.urls.status}/ready`);
            return (await response.json()) as { change: number };
          };
          const ready = await Promise.all(gateways.map(readyOf));
          return ready.every((r) => r.change >= change);
        });
        const calls = sendBurst(urls, headers, burst);
        const stops = await stutter(gateways[run % 3], calls);
        const statuses = await calls;
        const admitted = statuses.filter((s) => s === 200).length;
        const others = statuses.filter((s) => s !== 200 && s !== 429);
        assert.deepEqual(others, [], 'every call is admitted (200) or refused by the limit (429)');
        assert.ok(stops >= 2, `the node was stopped ${stops} times during the burst`);
        // What the nodes said about their counters, to tell a counting fault from an outage decision.
        const said = gateways.map(
          (g, i) =>
            `node ${i}:\n${g
              .output()
              .split('\n')
              .filter((l) => /rate-limit|redis/i.test(l))
              .join('\n')}`,
        );
        assert.equal(
          admitted,
          100,
          `issue-15: admitted ${admitted} of ${burst} on a 100/hour plan\n${said.join('\n')}`,
        );
      },
    );
  }
});
