/**
 * A reload's compile and its safety net (issue 18): the loader leaves out the documents of APIs it
 * expects the previous snapshot to reuse; a compile that still needs one says which, and the
 * gateway loads again with every document rather than serve a snapshot without that API. The
 * compile gives the event loop turns between APIs when its time slice is spent.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Gateway } from '../../../src/gateway/server.ts';
import type { GatewayOptions } from '../../../src/gateway/server.ts';
import { compileSnapshot, DocumentsNotRead } from '../../../src/gateway/snapshot.ts';
import { policyRegistry } from '../../../src/policies/registry.ts';
import { createMemoryCounterStore } from '../../../src/ratelimit/memory.ts';
import type { ReloadBase, SnapshotData } from '../../../src/store/snapshot-data.ts';
import { TimeSlices, wholly } from '../../../src/time-slices.ts';
import { logger, policySettings, shopData } from './fixture.ts';

const options = { registry: policyRegistry, settings: policySettings(), logger };

/** The fixture's rows as a store load gives them: with a base, the API at `version`, its document read or not. */
function loaded(version: string, document: 'read' | 'left out'): SnapshotData {
  const data = shopData();
  data.base = { change: 1, missing: [], productStamps: new Map() };
  data.apis[0].updated_at = version;
  if (document === 'left out') delete data.apis[0].document;
  return data;
}

/** A gateway (not listening) on `loadSnapshotData`; `close` ends it and its counters. */
function gatewayOn(loadSnapshotData: GatewayOptions['loadSnapshotData']) {
  const counters = createMemoryCounterStore();
  const gateway = new Gateway({
    logger,
    counters,
    registry: policyRegistry,
    policySettings: { ...policySettings(), counters },
    maxRequestBytes: 1024,
    loadSnapshotData,
  });
  const close = async () => {
    await gateway.close(1000);
    await counters.close();
  };
  return { gateway, close };
}

describe('API documents at reload', () => {
  test('a compile that needs a document the load left out names the API and builds nothing', async () => {
    await assert.rejects(
      compileSnapshot(loaded('v1', 'left out'), options),
      (error: unknown) => error instanceof DocumentsNotRead && error.apiIds.join() === 'api-1',
    );
    // Reused from a previous snapshot at the same version, the API needs no document.
    const previous = await compileSnapshot(loaded('v1', 'read'), options);
    assert.deepEqual(previous.base?.compiled, new Map([['cat-1|api-1', 'v1']]));
    const next = await compileSnapshot(loaded('v1', 'left out'), { ...options, previous });
    assert.equal(
      next.catalogs.get('acme/sandbox')!.apis[0].definition,
      previous.catalogs.get('acme/sandbox')!.apis[0].definition,
    );
  });

  test('the gateway then loads again with every document, and serves the API changed', async () => {
    let version = 'v1';
    const bases: Array<ReloadBase | undefined> = [];
    // As a loader that missed the API's change would: it expects the compiled API to be reused.
    const { gateway, close } = gatewayOn(async (base) => {
      bases.push(base);
      return loaded(version, base?.compiled === undefined ? 'read' : 'left out');
    });
    try {
      await gateway.reload();
      const first = gateway.current!.catalogs.get('acme/sandbox')!.apis[0];
      version = 'v2';
      await gateway.reload();
      assert.deepEqual(
        bases.map((base) =>
          base === undefined ? 'first' : base.compiled === undefined ? 'every document' : 'compiled',
        ),
        ['first', 'compiled', 'every document'],
      );
      const served = gateway.current!.catalogs.get('acme/sandbox')!.apis[0];
      assert.notEqual(served, first, 'compiled again');
      assert.deepEqual(gateway.current!.base?.compiled, new Map([['cat-1|api-1', 'v2']]));
    } finally {
      await close();
    }
  });

  test('with its slice spent the compile gives the event loop a turn between APIs; run wholly, none', async () => {
    const turnTaken = async (slices: TimeSlices) => {
      let turned = false;
      setImmediate(() => (turned = true));
      await compileSnapshot(loaded('v1', 'read'), { ...options, slices });
      return turned;
    };
    const sliced = new TimeSlices(0);
    assert.equal(await turnTaken(sliced), true);
    assert.equal(sliced.turns, 1, 'one API, one turn');
    assert.equal(await turnTaken(wholly()), false);
  });

  test("a gateway's reload takes a turn once its slice is spent, before it swaps the snapshot in", async () => {
    // A load that holds the thread for 5 ms: the gateway's 1 ms slice is spent when the compile starts.
    const { gateway, close } = gatewayOn(async () => {
      const until = performance.now() + 5;
      while (performance.now() < until);
      return loaded('v1', 'read');
    });
    try {
      let turned = false;
      setImmediate(() => (turned = true));
      await gateway.reload();
      assert.equal(turned, true, 'a callback waiting for the event loop ran during the reload');
      assert.equal(gateway.current?.apiCount, 1);
    } finally {
      await close();
    }
  });
});
