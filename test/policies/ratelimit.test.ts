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

function compile(policy: Record<string, unknown>, catchAll = false) {
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
        counters,
        namedLimits: namedLimits({ global: '3/1hour' }),
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
});
