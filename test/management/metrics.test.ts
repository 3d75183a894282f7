/**
 * `/metrics` on the management port (found by a review, Session 15): the port where providers
 * sign in served its process's metrics to anyone, and with a gateway in the same process those
 * name every API of every organization with its traffic. It now answers only the operator's
 * bearer token (`PORTICO_METRICS_TOKEN`), and is off (404) without one; the gateway's status
 * listener, on its own port, keeps serving them as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadSettings } from '../../src/config/config.ts';
import { PorticoError } from '../../src/errors.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const token = 'operator-metrics-token-0123456789';

async function metrics(base: string, authorization?: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${base}/metrics`, authorization ? { headers: { authorization } } : {});
  return { status: response.status, body: await response.text() };
}

describe('management /metrics', () => {
  let withToken: TestPlatform;
  let without: TestPlatform;
  before(async () => {
    withToken = await startTestPlatform({ env: { PORTICO_METRICS_TOKEN: token } });
    without = await startTestPlatform();
  });
  after(async () => {
    await withToken?.close();
    await without?.close();
  });

  test('answers the operator token only', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Basic ${token}`, `Bearer ${token}x`]) {
      const refused = await metrics(withToken.management, authorization);
      assert.equal(refused.status, 404, String(authorization));
      assert.doesNotMatch(refused.body, /portico_/);
    }
    const served = await metrics(withToken.management, `Bearer ${token}`);
    assert.equal(served.status, 200);
    assert.match(served.body, /^# HELP portico_gateway_requests_total/m);
  });

  test('is off without a token; the gateway status listener still serves them', async () => {
    assert.equal((await metrics(without.management)).status, 404);
    assert.equal((await metrics(without.management, 'Bearer ')).status, 404);
    const status = await metrics(without.status);
    assert.equal(status.status, 200);
    assert.match(status.body, /portico_gateway_requests_total/);
  });

  test('a token shorter than 16 characters is a configuration error naming the setting', () => {
    assert.throws(
      () => loadSettings({ PORTICO_METRICS_TOKEN: 'short' }),
      (error: unknown) => error instanceof PorticoError && /PORTICO_METRICS_TOKEN/.test(error.message),
    );
  });
});
