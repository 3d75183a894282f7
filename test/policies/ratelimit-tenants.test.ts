/**
 * Assembly `ratelimit` counters of one tenant never count another tenant's calls: a
 * catalog-named limit is counted per catalog (a provider calling its own open API must not
 * exhaust the limit another organization's API relies on), on memory and the real Redis.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../../src/gateway/context.ts';
import { namedLimits } from '../../src/gateway/create-gateway.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import type { CounterStore } from '../../src/ratelimit/types.ts';
import { awaitRoomInWindow, backends, deleteRedisKeys, freshKeyPrefix } from '../ratelimit/helpers.ts';

const HOUR = 3_600_000;

function context(): GatewayContext {
  return new GatewayContext({
    request: {
      verb: 'GET',
      uri: 'http://x/',
      path: '/',
      search: '',
      headers: {},
      parameters: {},
      body: undefined,
      'content-type': '',
    },
    message: emptyMessage(),
    api: {},
    properties: {},
    log: pino({ level: 'silent' }),
    operation: { id: 'op', path: '/', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

/** A ratelimit step of an API published in catalog `catalog` of organization `orgName`. */
function step(store: CounterStore, source: string, orgName: string, catalog: string) {
  return compileAssembly(
    { execute: [{ ratelimit: { source, 'rate-limit': [{ name: 'search' }] } }] },
    {
      name: 'api',
      version: '1.0.0',
      document: {},
      properties: {},
      catalog: { name: catalog, orgName },
      settings: {
        maxBackendBodyBytes: 1 << 20,
        tlsProfiles: {},
        script: { timeoutMs: 200, memoryBytes: 1 << 24 },
        counters: store,
        namedLimits: namedLimits({ search: '3/1hour' }),
      },
    },
    policyRegistry,
  );
}

/** How many of `rounds` calls of `run` were admitted (429s counted out). */
async function admitted(run: (ctx: GatewayContext) => unknown, rounds: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < rounds; i++) {
    try {
      await run(context());
      ok++;
    } catch (error) {
      if (!(error instanceof AssemblyError) || error.status !== 429) throw error;
    }
  }
  return ok;
}

for (const backend of backends) {
  describe(`assembly rate limits between tenants: ${backend.name}`, () => {
    const keyPrefix = freshKeyPrefix(`tenants-${backend.name}`);
    const store = backend.create(keyPrefix);
    after(async () => {
      await store.close();
      if (backend.name === 'redis') await deleteRedisKeys(keyPrefix);
    });

    test("a catalog-named limit used up by one organization's calls leaves another organization's intact", async () => {
      await awaitRoomInWindow(HOUR, 60_000);
      const acme = step(store, 'catalog-named', 'acme', 'sandbox');
      const globex = step(store, 'catalog-named', 'globex', 'sandbox');
      assert.equal(await admitted(acme, 10), 3);
      assert.equal(await admitted(globex, 10), 3, "acme's calls must not count against globex's limit");
    });

    test('a catalog-named limit is one counter per catalog: its APIs share it, another catalog of the org has its own', async () => {
      await awaitRoomInWindow(HOUR, 60_000);
      const [first, second] = [
        step(store, 'catalog-named', 'initech', 'prod'),
        step(store, 'catalog-named', 'initech', 'prod'),
      ];
      assert.equal((await admitted(first, 2)) + (await admitted(second, 5)), 3);
      assert.equal(await admitted(step(store, 'catalog-named', 'initech', 'test'), 5), 3);
    });

    test('names that would meet once joined by a separator still count apart', async () => {
      await awaitRoomInWindow(HOUR, 60_000);
      assert.equal(await admitted(step(store, 'catalog-named', 'a/b', 'c'), 5), 3);
      assert.equal(await admitted(step(store, 'catalog-named', 'a', 'b/c'), 5), 3);
      assert.equal(await admitted(step(store, 'catalog-named', 'a:b', 'c'), 5), 3);
      assert.equal(await admitted(step(store, 'catalog-named', 'a', 'b:c'), 5), 3);
    });

    test('a gateway-named limit is one counter for the whole gateway, every organization included', async () => {
      await awaitRoomInWindow(HOUR, 60_000);
      assert.equal(await admitted(step(store, 'gateway-named', 'acme', 'sandbox'), 2), 2);
      assert.equal(await admitted(step(store, 'gateway-named', 'globex', 'sandbox'), 5), 1);
    });
  });
}
