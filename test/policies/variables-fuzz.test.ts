/**
 * Fuzz test of context variable paths (issue 12): random names built from hostile segments
 * (`__proto__`, `constructor`, `prototype`, brackets, quotes, dots, unicode, huge lengths)
 * against get / set / clear / add on real contexts, some sharing one frozen `api` tree as
 * the gateway's snapshot does. Seeded, so a failure replays; bounded to a few seconds.
 */
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, VariableError, emptyMessage, pathCacheUsage } from '../../src/gateway/context.ts';
import { compile } from './helpers.ts';
import { intrinsicsSnapshot, pick, seeded, unchangedSince, variableName, variableValue } from '../helpers/fuzz.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

const seed = 0x12c0ffee;
const sharedApi = {
  name: 'fuzz',
  properties: { maps_url: 'https://maps.example' },
  org: { id: 'o1', name: 'org' },
  list: ['a'],
};
const sharedCopy = JSON.stringify(sharedApi);

function newContext(): GatewayContext {
  return new GatewayContext({
    request: {
      verb: 'GET',
      uri: 'http://h/',
      path: '/',
      search: '',
      headers: { 'x-tier': 'silver' },
      parameters: {},
      body: undefined,
      'content-type': '',
    },
    message: emptyMessage(),
    api: { ...sharedApi },
    properties: sharedApi.properties,
    log: pino({ level: 'silent' }),
    operation: { id: undefined, path: '/', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

// set-variable's `add`, compiled once per name (its names are checked at publish).
function addStep(name: string) {
  try {
    return compile({
      execute: [{ 'set-variable': { version: '2.0.0', actions: [{ add: name, value: 'added' }] } }],
    });
  } catch {
    return undefined;
  }
}

describe('context variable paths (fuzz)', () => {
  test('random names never reach a prototype, throw only VariableError, and keep memory bounded', async () => {
    const random = seeded(seed);
    const before = intrinsicsSnapshot();
    const unexpected: string[] = [];
    let refusals = 0;
    const started = heapMiB();
    const deadline = Date.now() + 4000;
    let operations = 0;
    for (let round = 0; round < 400 && Date.now() < deadline; round++) {
      const ctx = newContext();
      for (let i = 0; i < 50; i++, operations++) {
        const name = variableName(random);
        const action = pick(random, ['get', 'set', 'clear', 'add'] as const);
        try {
          if (action === 'get') ctx.get(name);
          else if (action === 'set') ctx.set(name, variableValue(random));
          else if (action === 'clear') ctx.clear(name);
          else await addStep(name)?.(ctx);
        } catch (error) {
          if (error instanceof VariableError) refusals++;
          else unexpected.push(`${action} ${JSON.stringify(name.slice(0, 80))}: ${String(error)}`);
        }
      }
      // Whatever was written serializes in bounded time and size (no sparse lists).
      const text = JSON.stringify(ctx.vars);
      assert.ok(text.length < 4 * 1024 * 1024, `round ${round}: ${text.length} characters`);
    }
    assert.deepEqual(unexpected, [], 'only the documented VariableError may be thrown');
    assert.deepEqual(unchangedSince(before), []);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(JSON.stringify(sharedApi), sharedCopy, 'the shared api tree is unchanged');
    assert.ok(refusals > 0 && operations > 1000, `${operations} operations, ${refusals} refused`);
    const usage = pathCacheUsage();
    assert.ok(usage.bytes <= usage.budgetBytes);
    const grown = heapMiB() - started;
    assert.ok(grown < 24, `heap grew by ${grown.toFixed(1)} MiB`);
  });
});
