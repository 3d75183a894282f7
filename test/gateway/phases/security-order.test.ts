/**
 * The security phase runs right after routing, before parameters (issue 17, issue 13 item 2): a
 * caller who is not let in never learns the parameter rules from a 400. The phase itself is a
 * function of the snapshot and the request; the order is checked through a real Gateway (its
 * request listener on a loopback port) fed the same snapshot data.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { routeRequest } from '../../../src/gateway/router.ts';
import { authenticate, callerDirectory } from '../../../src/gateway/security/index.ts';
import { Gateway } from '../../../src/gateway/server.ts';
import { policyRegistry } from '../../../src/policies/registry.ts';
import { createMemoryCounterStore } from '../../../src/ratelimit/memory.ts';
import { clientId, logger, policySettings, shopData, shopSnapshot } from './fixture.ts';

const snapshot = await shopSnapshot();

describe('security phase', () => {
  const route = routeRequest(snapshot.catalogs, 'GET', '/acme/sandbox/shop/items');
  assert.ok('api' in route);
  const directory = callerDirectory(snapshot, route.api);
  const callerFor = (headers: Record<string, string>) =>
    authenticate(route.operation.security, { headers, query: undefined }, directory);

  test('returns the caller: client id, app and active subscription, from the snapshot', () => {
    const caller = callerFor({ 'x-ibm-client-id': clientId });
    assert.ok(!(caller instanceof Promise));
    assert.equal(caller.clientId, clientId);
    assert.equal(caller.credential?.app.id, 'app-1');
    assert.equal(caller.subscription?.planName, 'silver');
  });

  test('an unknown or missing client id is a coded 401 naming what was presented', () => {
    for (const headers of [{}, { 'x-ibm-client-id': 'nobody' }] as Array<Record<string, string>>) {
      assert.throws(
        () => callerFor(headers),
        (error: unknown) => error instanceof PorticoError && error.code === 'GW_UNAUTHORIZED' && error.status === 401,
      );
    }
  });
});

describe('phase order through the gateway', () => {
  let gateway: Gateway;
  let base: string;
  before(async () => {
    const counters = createMemoryCounterStore();
    gateway = new Gateway({
      logger,
      counters,
      registry: policyRegistry,
      policySettings: { ...policySettings(), counters },
      maxRequestBytes: 1024,
      loadSnapshotData: async () => shopData(),
    });
    await gateway.reload();
    const server = await gateway.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/sandbox/shop`;
  });
  after(() => gateway.close(1000));

  test('without credentials, a request missing a required parameter gets 401, not 400', async () => {
    const response = await fetch(`${base}/items`);
    assert.equal(response.status, 401);
    assert.equal(
      ((await response.json()) as { moreInformation: string }).moreInformation,
      'Invalid client id or secret.',
    );
  });

  test('with credentials, the same request gets the parameter rule (400)', async () => {
    const response = await fetch(`${base}/items?limit=x`, { headers: { 'X-IBM-Client-Id': clientId } });
    assert.equal(response.status, 400);
    assert.match(
      ((await response.json()) as { moreInformation: string }).moreInformation,
      /limit \(query\) is invalid/,
    );
  });

  test('with credentials and valid parameters, the assembly answers', async () => {
    const response = await fetch(`${base}/items?limit=2`, { headers: { 'X-IBM-Client-Id': clientId } });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'ok');
  });
});
