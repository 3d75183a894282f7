/**
 * The references an assembly makes to plan-named limits, wherever the ratelimit policy sits, and
 * the plans that leave one out (the publish rule `unknown-plan-limit`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, emptyMessage } from '../../src/gateway/context.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { planLimitGaps, planLimitReferences } from '../../src/policies/plan-limit-refs.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import type { CallerLimits } from '../../src/policies/types.ts';
import { createMemoryCounterStore } from '../../src/ratelimit/memory.ts';

const limit = (name: string, field = 'rate-limit', source = 'plan-named') => ({
  ratelimit: { source, [field]: [{ name }] },
});

function apiDocument(assembly: Record<string, unknown>): Record<string, unknown> {
  return {
    swagger: '2.0',
    info: { title: 'A', version: '1.0.0', 'x-ibm-name': 'a' },
    basePath: '/a',
    paths: { '/one': { get: { operationId: 'one', responses: { 200: { description: 'ok' } } } } },
    'x-ibm-configuration': { assembly },
  };
}

const nested = apiDocument({
  execute: [
    limit('top'),
    {
      'operation-switch': {
        case: [{ operations: ['one'], execute: [limit('in-operation-case')] }],
        otherwise: [limit('in-operation-otherwise', 'burst-limit')],
      },
    },
    {
      switch: {
        version: '2.0.0',
        case: [
          { condition: "$httpVerb() = 'GET'", execute: [{ if: { condition: 'true', execute: [limit('in-if')] } }] },
          { otherwise: [limit('in-switch-otherwise')] },
        ],
      },
    },
    limit('plan-default is not named', 'rate-limit', 'plan-default'),
    limit('gateway-named is not the plan', 'rate-limit', 'gateway-named'),
  ],
  catch: [{ errors: ['ConnectionError'], execute: [limit('in-catch')] }, { default: [limit('in-default')] }],
  finally: [limit('in-finally')],
});

describe('plan-named references of an assembly', () => {
  test('are found in execute, every branch of operation-switch, switch and if, catch cases and finally', () => {
    assert.deepEqual(planLimitReferences(nested), [
      { name: 'top', path: '$.x-ibm-configuration.assembly.execute[0].ratelimit.rate-limit[0].name' },
      {
        name: 'in-operation-case',
        path: '$.x-ibm-configuration.assembly.execute[1].operation-switch.case[0].execute[0].ratelimit.rate-limit[0].name',
      },
      {
        name: 'in-operation-otherwise',
        path: '$.x-ibm-configuration.assembly.execute[1].operation-switch.otherwise[0].ratelimit.burst-limit[0].name',
      },
      {
        name: 'in-if',
        path: '$.x-ibm-configuration.assembly.execute[2].switch.case[0].execute[0].if.execute[0].ratelimit.rate-limit[0].name',
      },
      {
        name: 'in-switch-otherwise',
        path: '$.x-ibm-configuration.assembly.execute[2].switch.case[1].otherwise[0].ratelimit.rate-limit[0].name',
      },
      { name: 'in-catch', path: '$.x-ibm-configuration.assembly.catch[0].execute[0].ratelimit.rate-limit[0].name' },
      { name: 'in-default', path: '$.x-ibm-configuration.assembly.catch[1].default[0].ratelimit.rate-limit[0].name' },
      { name: 'in-finally', path: '$.x-ibm-configuration.assembly.finally[0].ratelimit.rate-limit[0].name' },
    ]);
  });

  test('an API without an assembly names none', () => {
    assert.deepEqual(planLimitReferences({ swagger: '2.0', paths: {} }), []);
  });
});

describe('plans that leave a referenced name out', () => {
  const api = { key: 'a', ref: 'a:1.0.0', document: apiDocument({ execute: [limit('search'), limit('constructor')] }) };
  const gapsOf = (plans: Record<string, unknown>) =>
    planLimitGaps({ plans }, [api]).map((gap) => `${gap.plan}:${gap.reference.name}`);

  test('a name is defined by assembly-rate-limits or assembly-burst-limits, as its own key', () => {
    const both = { search: { value: '1/1hour' }, constructor: { value: 'unlimited' } };
    assert.deepEqual(
      gapsOf({
        rate: { 'assembly-rate-limits': both },
        burst: { 'assembly-burst-limits': both },
        split: { 'assembly-rate-limits': { search: [] }, 'assembly-burst-limits': { constructor: [] } },
        none: {},
        plainLimits: { 'rate-limits': both },
      }),
      ['none:search', 'none:constructor', 'plainLimits:search', 'plainLimits:constructor'],
    );
  });

  test("a plan covers the API unless its apis list leaves the key out or names operations of it (the gateway's reading)", () => {
    assert.deepEqual(
      gapsOf({
        all: {},
        listed: { apis: { a: {} } },
        listedNull: { apis: { a: null } },
        other: { apis: { b: {} } },
        operations: { apis: { a: { operations: [{ operationId: 'one' }] } } },
      }),
      [
        'all:search',
        'all:constructor',
        'listed:search',
        'listed:constructor',
        'listedNull:search',
        'listedNull:constructor',
      ],
    );
  });
});

describe('a plan without the name at the gateway (a document stored before the rule)', () => {
  test('the call is refused with RuntimeError 500, and logged once per plan', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'error' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const step = compileAssembly(
      { execute: [{ ratelimit: { title: 'search-limit', source: 'plan-named', 'rate-limit': [{ name: 'search' }] } }] },
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
          counters: createMemoryCounterStore(),
        },
      },
      policyRegistry,
    );
    const call = (limits: CallerLimits) =>
      step(
        new GatewayContext({
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
          log,
          operation: { id: 'op', path: '/', verb: 'GET' },
          signal: new AbortController().signal,
          limits,
        }),
      );
    const silver: CallerLimits = { key: 'sub-1', plan: [], named: Object.create(null) };
    const bronze: CallerLimits = { key: 'sub-2', plan: [], named: Object.create(null) };
    for (const limits of [silver, silver, { ...silver, key: 'sub-3' }, bronze]) {
      await assert.rejects(
        async () => call(limits),
        (error: unknown) =>
          error instanceof AssemblyError &&
          error.errorName === 'RuntimeError' &&
          error.status === 500 &&
          error.policy === 'search-limit' &&
          !error.message.includes('search'),
      );
    }
    assert.deepEqual(
      lines.map((line) => [line.limit, line.policy, line.path]),
      [
        ['search', 'search-limit', '$.x-ibm-configuration.assembly.execute[0].ratelimit'],
        ['search', 'search-limit', '$.x-ibm-configuration.assembly.execute[0].ratelimit'],
      ],
      'once for silver (two subscriptions share its limits), once for bronze',
    );
  });
});
