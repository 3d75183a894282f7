/**
 * The plan-limit phase on its own (memory counters in process, Redis counters over the network),
 * and the assembly `ratelimit` policy's 429 through a real Gateway: `Retry-After` is the time
 * until the window resets, not a constant 1 (issue 17).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { namedLimits } from '../../../src/gateway/create-gateway.ts';
import { enforcePlanLimits } from '../../../src/gateway/plan-limits.ts';
import { Gateway } from '../../../src/gateway/server.ts';
import { subscriptionFor } from '../../../src/gateway/subscriptions.ts';
import { policyRegistry } from '../../../src/policies/registry.ts';
import { createMemoryCounterStore } from '../../../src/ratelimit/memory.ts';
import { createRedisCounterStore } from '../../../src/ratelimit/redis.ts';
import type { CounterStore } from '../../../src/ratelimit/types.ts';
import { clientId, logger, policySettings, shopData, shopDocument, shopSnapshot } from './fixture.ts';

const redisUrl = process.env.PORTICO_TEST_REDIS ?? 'redis://127.0.0.1:6379';

/** Windows are aligned to the epoch: an hour's window ends at the next full hour. */
function secondsToNextHour(): number {
  return Math.ceil((3_600_000 - (Date.now() % 3_600_000)) / 1000);
}

/** Retry-After is the rest of the current window, within a second or two of the clock read here. */
function assertRestOfHour(value: string | null | undefined): void {
  const retryAfter = Number(value);
  const expected = secondsToNextHour();
  assert.ok(Math.abs(retryAfter - expected) <= 2, `Retry-After ${value}, expected about ${expected}`);
}

async function silverSubscription() {
  const api = (await shopSnapshot(3)).catalogs.get('acme/sandbox')!.apis[0];
  const subscription = subscriptionFor(api, 'app-1');
  assert.ok(subscription);
  return subscription;
}

const stores: Array<[string, () => CounterStore]> = [
  ['memory', () => createMemoryCounterStore()],
  ['redis', () => createRedisCounterStore({ url: redisUrl, failOpen: false, keyPrefix: `test:phases:${Date.now()}:` })],
];

for (const [kind, create] of stores) {
  describe(`plan-limit phase, ${kind} counters`, () => {
    const counters = create();
    after(() => counters.close());

    test('every admitted call carries the limit headers; the fourth of 3/1hour is a 429 with Retry-After', async () => {
      const subscription = await silverSubscription();
      for (let call = 1; call <= 3; call++) {
        const headers = new Map(await enforcePlanLimits(counters, subscription));
        assert.equal(headers.get('X-RateLimit-Limit'), 'name=default,3;');
        assert.equal(headers.get('X-RateLimit-Remaining'), `name=default,${3 - call};`);
        assert.equal(headers.get('RateLimit-Policy'), '"default";q=3;w=3600');
        assert.equal(headers.has('Retry-After'), false);
      }
      await assert.rejects(
        async () => enforcePlanLimits(counters, subscription),
        (error: unknown) => {
          assert.ok(error instanceof PorticoError);
          assert.equal(error.code, 'GW_RATE_LIMIT');
          assert.equal(error.status, 429);
          assert.equal(error.headers['X-RateLimit-Remaining'], 'name=default,0;');
          assertRestOfHour(error.headers['Retry-After']);
          return true;
        },
      );
    });
  });
}

test('a caller without a subscription, or a plan without limits, is not counted', () => {
  const counters = createMemoryCounterStore();
  assert.equal(enforcePlanLimits(counters, undefined), undefined);
});

test('in-process counters answer without a promise (the fast path)', async () => {
  const headers = enforcePlanLimits(createMemoryCounterStore(), await silverSubscription());
  assert.ok(Array.isArray(headers));
});

describe('issue-17: an assembly ratelimit 429 carries the real Retry-After', () => {
  const limited = structuredClone(shopDocument);
  limited['x-ibm-configuration'].assembly.execute.unshift({
    // @ts-expect-error: the fixture's assembly list is typed by its first entry
    ratelimit: { version: '2.0.0', source: 'gateway-named', 'rate-limit': [{ name: 'hourly' }] },
  });
  const counters = createMemoryCounterStore();
  const gateway = new Gateway({
    logger,
    counters,
    registry: policyRegistry,
    policySettings: { ...policySettings(), counters, namedLimits: namedLimits({ hourly: '1/1hour' }) },
    maxRequestBytes: 1024,
    loadSnapshotData: async () => shopData(100, limited),
  });
  after(() => gateway.close(1000));

  test("the second call in the hour: 429 with Retry-After = the rest of the window, and the policy's limit headers", async () => {
    await gateway.reload();
    assert.deepEqual(gateway.current!.failures, []);
    const server = await gateway.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/sandbox/shop/items/count`;
    const headers = { 'X-IBM-Client-Id': clientId };
    const first = await fetch(url, { headers });
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    const second = await fetch(url, { headers });
    assert.equal(second.status, 429);
    assert.equal(
      ((await second.json()) as { moreInformation: string }).moreInformation,
      'Assembly Rate Limit exceeded (policy ratelimit)',
    );
    assertRestOfHour(second.headers.get('retry-after'));
    assert.equal(second.headers.get('x-ratelimit-limit'), 'name=hourly,1;');
    assert.equal(second.headers.get('ratelimit-policy'), '"hourly";q=1;w=3600');
  });
});
