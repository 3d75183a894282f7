import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../../src/gateway/context.ts';
import { namedLimits } from '../../src/gateway/create-gateway.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError, PolicyCompileError } from '../../src/policies/types.ts';
import type { CallerLimits } from '../../src/policies/types.ts';
import { createMemoryCounterStore } from '../../src/ratelimit/memory.ts';
import type { CounterStore, LimitDecision, LimitRule } from '../../src/ratelimit/types.ts';
import { parseProductDocument } from '../../src/definitions/index.ts';

const counters = createMemoryCounterStore();

function context(limits?: CallerLimits): GatewayContext {
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
    limits,
  });
}

function compile(policy: Record<string, unknown>, catchAll = false, store: CounterStore = counters) {
  return compileAssembly(
    {
      execute: [{ ratelimit: policy }],
      ...(catchAll
        ? {
            catch: [
              {
                errors: ['AssemblyRateLimitError'],
                execute: [{ 'set-variable': { actions: [{ set: 'message.body', value: 'slow down' }] } }],
              },
            ],
          }
        : {}),
    },
    {
      name: 'api',
      version: '1.0.0',
      document: {},
      properties: {},
      catalog: { name: 'sandbox', orgName: 'org' },
      settings: {
        maxBackendBodyBytes: 1 << 20,
        tlsProfiles: {},
        script: { timeoutMs: 200, memoryBytes: 1 << 24 },
        counters: store,
        namedLimits: namedLimits({ global: '3/1hour', shared: '3/1hour', wide: '1000/1hour' }),
      },
    },
    policyRegistry,
  );
}

describe('ratelimit policy', () => {
  test("plan-named limits from the product's assembly-rate-limits admit their count, then AssemblyRateLimitError 429", async () => {
    const product = parseProductDocument(
      'product: 1.0.0\ninfo: {name: p, version: 1.0.0}\nplans:\n  gold:\n    assembly-rate-limits:\n      search:\n        - {value: 2/1hour, hard-limit: true}\napis: {}\n',
      'p.yaml',
    );
    assert.deepEqual(
      product.plans[0].assemblyLimits?.search.map((l) => [l.count, l.hardLimit]),
      [[2, true]],
    );
    const step = compile({
      version: '2.0.0',
      source: 'plan-named',
      'rate-limit': [{ name: 'search', operation: 'consume' }],
    });
    const limits: CallerLimits = {
      key: `sub-${Math.random()}`,
      plan: [],
      named: { search: [{ name: 'search', limit: 2, windowMs: 3_600_000, hard: true }] },
    };
    await step(context(limits));
    await step(context(limits));
    await assert.rejects(
      async () => step(context(limits)),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'AssemblyRateLimitError' &&
        error.status === 429 &&
        error.message === 'Assembly Rate Limit exceeded',
    );
  });

  test('the error is catchable by name', async () => {
    const step = compile({ source: 'gateway-named', 'rate-limit': [{ name: 'global' }] }, true);
    const results: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const ctx = context();
      await step(ctx);
      results.push(ctx.get('message.body'));
    }
    assert.deepEqual(results, [undefined, undefined, undefined, 'slow down']);
  });

  test('an unidentified caller is not limited by plan-sourced limits', async () => {
    const step = compile({ source: 'plan-default' });
    for (let i = 0; i < 5; i++) await step(context());
  });

  test('an unknown gateway-named limit or a count limit fails at publish time, naming the path', () => {
    assert.throws(
      () => compile({ source: 'gateway-named', 'rate-limit': [{ name: 'missing' }] }),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unknown-limit' &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].ratelimit',
    );
    assert.throws(
      () => compile({ 'count-limit': [{ name: 'c' }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'unsupported',
    );
  });

  test('a limit named like an Object.prototype member is unknown unless defined: refused at publish, or the call refused', async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      assert.throws(
        () => compile({ source: 'gateway-named', 'rate-limit': [{ name }] }),
        (error: unknown) => error instanceof PolicyCompileError && error.rule === 'unknown-limit',
        name,
      );
    }
    const { store, seen } = windowKeyedStore();
    const step = compile(
      { source: 'plan-named', 'rate-limit': [{ name: 'constructor' }, { name: 'x' }] },
      false,
      store,
    );
    const x = [{ name: 'x', limit: 2, windowMs: 3_600_000, hard: true }];
    // A plan without its own `constructor`: refused (fail closed), nothing counted.
    await assert.rejects(
      async () => step(context({ key: 'sub-proto', plan: [], named: { x } })),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'RuntimeError' && error.status === 500,
    );
    assert.deepEqual(seen, []);
    // One defining it (unlimited: no rule) counts x alone.
    const named = Object.assign(Object.create(null) as Record<string, LimitRule[]>, { constructor: [], x });
    assert.equal(await admitted([step], 3, { key: 'sub-proto', plan: [], named }), 2);
    assert.deepEqual(seen, [x, x, x], 'only the limit with rules is counted');
  });

  test('policies referencing the same named limit share its counter, whatever other names they list', async () => {
    const store = createMemoryCounterStore();
    const steps = [
      compile({ source: 'gateway-named', 'rate-limit': [{ name: 'shared' }] }, false, store),
      compile({ source: 'gateway-named', 'rate-limit': [{ name: 'shared' }, { name: 'wide' }] }, false, store),
      compile(
        { source: 'gateway-named', 'burst-limit': [{ name: 'shared' }], 'rate-limit': [{ name: 'wide' }] },
        false,
        store,
      ),
    ];
    assert.equal(await admitted(steps, 5), 3);

    const limits: CallerLimits = {
      key: 'sub-shared',
      plan: [],
      named: {
        search: [{ name: 'search', limit: 3, windowMs: 3_600_000, hard: true }],
        x: [{ name: 'x', limit: 100, windowMs: 3_600_000, hard: true }],
      },
    };
    const planSteps = [
      compile({ source: 'plan-named', 'rate-limit': [{ name: 'search' }] }, false, store),
      compile({ source: 'plan-named', 'rate-limit': [{ name: 'search' }, { name: 'x' }] }, false, store),
    ];
    assert.equal(await admitted(planSteps, 5, limits), 3);
    await store.close();
  });

  test('a plan-named limit listed in both rate-limit and burst-limit is counted once per call', async () => {
    const { store, seen } = windowKeyedStore();
    const named = {
      search: [
        { name: 'search', limit: 100, windowMs: 3_600_000, hard: true },
        { name: 'search', limit: 20, windowMs: 60_000, hard: true },
      ],
    };
    const limits: CallerLimits = { key: 'sub-dup', plan: [], named };
    const step = compile(
      { source: 'plan-named', 'rate-limit': [{ name: 'search' }], 'burst-limit': [{ name: 'search' }] },
      false,
      store,
    );
    assert.equal(await admitted([step], 40, limits), 20);
    assert.equal(seen.length, 40);
  });

  test("plan-named limits hand the store the plan's own rule array on every call (Redis leases match it)", async () => {
    const { store, seen } = windowKeyedStore();
    const named = { one: [{ name: 'one', limit: 1000, windowMs: 3_600_000, hard: true }] };
    const step = compile({ source: 'plan-named', 'rate-limit': [{ name: 'one' }] }, false, store);
    assert.equal(await admitted([step], 5, { key: 'sub-same', plan: [], named }), 5);
    assert.equal(seen.length, 5);
    for (const rules of seen) assert.equal(rules, named.one);
  });
});

/** Calls the steps in turn, `rounds` times each; how many were admitted (429s counted out). */
async function admitted(steps: Array<(ctx: GatewayContext) => unknown>, rounds: number, limits?: CallerLimits) {
  let ok = 0;
  for (const step of steps)
    for (let i = 0; i < rounds; i++) {
      try {
        await step(context(limits));
        ok++;
      } catch (error) {
        if (!(error instanceof AssemblyError) || error.status !== 429) throw error;
      }
    }
  return ok;
}

/** A store counting per key, rule name and window like the Redis one; records each hit's rules. */
function windowKeyedStore(): { store: CounterStore; seen: Array<readonly LimitRule[]> } {
  const counts = new Map<string, number>();
  const seen: Array<readonly LimitRule[]> = [];
  const store: CounterStore = {
    kind: 'memory',
    async hit(key, rules): Promise<LimitDecision> {
      seen.push(rules);
      const ids = rules.map((r) => `${key}:${r.name}:${r.windowMs}`);
      const allowed = rules.every((r, i) => !r.hard || (counts.get(ids[i]) ?? 0) < r.limit);
      if (allowed) for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
      const results = rules.map((rule, i) => {
        const count = counts.get(ids[i]) ?? 0;
        return { rule, count, remaining: Math.max(0, rule.limit - count), resetMs: rule.windowMs, exceeded: !allowed };
      });
      return { allowed, results, rules, retryAfterSeconds: allowed ? undefined : 1 };
    },
    async close() {},
  };
  return { store, seen };
}
