/**
 * The status paths on their own: `/health`, `/ready` (with the APIs a node leaves out and why),
 * `/metrics`, and 404 for anything else.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { compileSnapshot } from '../../../src/gateway/snapshot.ts';
import { readyAnswer, statusAnswer } from '../../../src/gateway/status.ts';
import type { NodeState } from '../../../src/gateway/status.ts';
import { policyRegistry } from '../../../src/policies/registry.ts';
import { logger, policySettings, shopData, shopDocument, shopSnapshot } from './fixture.ts';

const body = (payload: unknown) => JSON.parse(String(payload)) as Record<string, unknown>;

describe('status phase', () => {
  test('/ready lists the APIs that do not compile on this node, and stays ready for the rest', async () => {
    const broken = structuredClone(shopDocument);
    broken['x-ibm-configuration'].assembly.execute = [
      // @ts-expect-error: an invoke this gateway cannot run (no such TLS profile)
      { invoke: { version: '2.0.0', 'target-url': 'https://backend.example/', 'tls-profile': 'missing-profile' } },
    ];
    const snapshot = await compileSnapshot(shopData(3, broken), {
      registry: policyRegistry,
      settings: policySettings(),
      logger,
    });
    const answer = readyAnswer({ snapshot, draining: false, health: { rateLimitCounters: { backend: 'memory' } } });
    assert.equal(answer.status, 200);
    const ready = body(answer.payload);
    assert.equal(ready.status, 'ready');
    assert.equal(ready.apis, 0);
    assert.deepEqual(ready.rateLimitCounters, { backend: 'memory' });
    const failures = ready.failures as Array<Record<string, string>>;
    assert.equal(failures.length, 1);
    assert.deepEqual(
      { ...failures[0], reason: undefined },
      { api: 'shop:1.0.0', org: 'acme', catalog: 'sandbox', reason: undefined },
    );
    assert.match(failures[0].reason, /missing-profile/);
  });

  test('/ready is 503 before a snapshot and while draining', async () => {
    const snapshot = await shopSnapshot();
    assert.equal(readyAnswer({ snapshot: undefined, draining: false, health: {} }).status, 503);
    const draining = readyAnswer({ snapshot, draining: true, health: {} });
    assert.equal(draining.status, 503);
    assert.deepEqual(body(draining.payload), { status: 'not ready', draining: true, change: 1, apis: 1, failures: [] });
  });

  test('/health, /metrics, and 404 for another path', async () => {
    const node = (): NodeState => ({ snapshot: undefined, draining: false, health: {} });
    assert.deepEqual(body((await statusAnswer('/health', node)).payload), { status: 'ok' });
    const metrics = await statusAnswer('/metrics', node);
    assert.match(String(metrics.headers.toObject()['content-type']), /^text\/plain/);
    await assert.rejects(
      statusAnswer('/admin', node),
      (error: unknown) => error instanceof PorticoError && error.code === 'GW_NOT_FOUND',
    );
  });
});
