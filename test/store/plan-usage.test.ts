/**
 * The portal's "used" figure for a plan's limits counts what the gateway's plan-limit phase
 * counted: every call of the subscription that got past security and the parameter checks and
 * was let in by the plan's limits, whatever came after (a 429 from an assembly `rate-limit`
 * policy included). Not counted: calls refused 400 by the parameter checks (before the plan
 * limit) and calls the plan limit itself refused (429 `GW_RATE_LIMIT`). From the hourly rollups
 * (`plan_calls`) and from the events alike.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { subscriptionCallsSince } from '../../src/store/analytics.ts';
import { insertEvents } from '../../src/store/analytics-writes.ts';
import type { NewActivityEvent } from '../../src/store/schema.ts';
import { storeBackends } from '../helpers/stores.ts';

const hourStart = 1_720_000_800_000 - (1_720_000_800_000 % 3_600_000);
let n = 0;

function call(ts: number, status: number, errorName = ''): NewActivityEvent {
  return {
    ts,
    tx_id: `usage-${n++}`,
    org_name: 'acme',
    catalog_name: 'sandbox',
    api_name: 'orders',
    api_version: '1.0.0',
    operation_id: 'get',
    verb: 'GET',
    path: '/acme/sandbox/orders',
    status,
    latency_ms: 2,
    backend_ms: 1,
    client_id: 'client-1',
    app_id: 'app-1',
    app_name: 'App',
    consumer_org_id: 'corg-1',
    consumer_org_name: 'Devs',
    subscription_id: 'sub-used',
    plan_id: 'plan-1',
    product_name: 'p',
    plan_name: 'gold',
    error_name: errorName,
    content: 'activity',
  };
}

describe("a subscription's used calls are those its plan's limits counted", () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: assembly 429s count, parameter 400s and the plan limit's own 429s do not`, async () => {
      const t = await backend.open();
      try {
        const minute = hourStart + 120_000;
        const events = [
          call(hourStart - 1000, 200), // before the window
          call(hourStart + 1000, 200),
          call(minute, 200),
          call(minute + 1, 500, 'ConnectionError'),
          call(minute + 2, 429, 'AssemblyRateLimitError'), // let in by the plan, refused by the assembly
          call(minute + 3, 400, 'BadRequestError'), // the assembly's validate: after the plan limit
          call(minute + 4, 413, 'GW_PAYLOAD_TOO_LARGE'), // the body is read after the plan limit
          call(minute + 5, 400, 'GW_MISSING_PARAMETER'), // parameter checks: before the plan limit
          call(minute + 6, 400, 'GW_INVALID_PARAMETER'),
          call(minute + 7, 429, 'GW_RATE_LIMIT'), // the plan limit's own refusal
        ];
        await t.store.transaction((trx) => insertEvents(trx, events));
        // An hour window, from the rollups.
        assert.equal(await subscriptionCallsSince(t.store.db, 'sub-used', hourStart), 6);
        // A minute window (not on an hour), from the events.
        assert.equal(await subscriptionCallsSince(t.store.db, 'sub-used', minute), 5);
      } finally {
        await t.dispose();
      }
    });
  }
});
