/**
 * Fuzz test of the GatewayScript host API (issue 12): one compiled gatewayscript policy runs
 * random sequences of context.get/set/clear, apim.getvariable/setvariable, message.header
 * set/get and reject, with hostile names and values, through its public compile → step(ctx)
 * interface. The script catches what it is thrown; the context underneath records anything
 * it throws that is not the documented VariableError. Seeded and bounded to a few seconds.
 */
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, test } from 'node:test';
import pino from 'pino';
import { GatewayContext, VariableError, emptyMessage, pathCacheUsage } from '../../src/gateway/context.ts';
import type { ContextInit } from '../../src/gateway/context.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import { compile } from './helpers.ts';
import { intrinsicsSnapshot, pick, seeded, unchangedSince, variableName, variableValue } from '../helpers/fuzz.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMiB(): number {
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

const seed = 0x5eed0012;

const runner = `
var ops = context.get('fuzz_ops') || [];
for (var i = 0; i < ops.length; i++) {
  var op = ops[i];
  try {
    if (op[0] === 'get') context.get(op[1]);
    else if (op[0] === 'set') context.set(op[1], op[2]);
    else if (op[0] === 'clear') context.clear(op[1]);
    else if (op[0] === 'getvariable') apim.getvariable(op[1]);
    else if (op[0] === 'setvariable') apim.setvariable(op[1], op[2], op[3]);
    else if (op[0] === 'header.set') context.message.header.set(op[1], op[2]);
    else if (op[0] === 'header.get') context.message.header.get(op[1]);
    else if (op[0] === 'reject') context.reject(op[1], op[2]);
  } catch (e) {}
}`;

/** A context that records every error it throws that is not the documented refusal. */
class WatchedContext extends GatewayContext {
  constructor(
    init: ContextInit,
    private readonly unexpected: string[],
  ) {
    super(init);
  }

  private watch<T>(action: string, name: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof VariableError))
        this.unexpected.push(`${action} ${JSON.stringify(name.slice(0, 80))}: ${String(error)}`);
      throw error;
    }
  }

  override get(name: string): unknown {
    return this.watch('get', name, () => super.get(name));
  }

  override set(name: string, value: unknown): void {
    this.watch('set', name, () => super.set(name, value));
  }

  override clear(name: string): void {
    this.watch('clear', name, () => super.clear(name));
  }
}

const sharedApi = {
  name: 'fuzz',
  properties: { maps_url: 'https://maps.example' },
  org: { id: 'o1', name: 'org' },
};
const sharedCopy = JSON.stringify(sharedApi);

function operation(random: () => number): unknown[] {
  const kind = pick(random, [
    'get',
    'set',
    'clear',
    'getvariable',
    'setvariable',
    'header.set',
    'header.get',
    'reject',
  ] as const);
  const name = variableName(random);
  if (kind === 'set') return [kind, name, variableValue(random)];
  if (kind === 'setvariable')
    return [kind, name, variableValue(random), pick(random, ['set', 'add', 'clear', undefined])];
  if (kind === 'header.set')
    return [kind, pick(random, ['X-Tier', '__proto__', 'constructor', 'Content-Type', name]), 'gold'];
  if (kind === 'header.get') return [kind, pick(random, ['x-tier', '__proto__', 'toString', name])];
  if (kind === 'reject')
    return random() < 0.9 ? ['get', name] : [kind, pick(random, ['NotFound', '__proto__', 'constructor']), 'no'];
  return [kind, name];
}

describe('GatewayScript host API (fuzz)', () => {
  test('random host calls never reach a prototype, throw only VariableError, and keep memory bounded', async () => {
    const step = compile({
      execute: [{ gatewayscript: { version: '2.0.0', title: 'fuzz', source: runner } }],
    });
    const random = seeded(seed);
    const before = intrinsicsSnapshot();
    const unexpected: string[] = [];
    const outcomes = { ok: 0, rejected: 0 };
    const started = heapMiB();
    const deadline = Date.now() + 5000;
    for (let run = 0; run < 300 && Date.now() < deadline; run++) {
      const ctx = new WatchedContext(
        {
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
        },
        unexpected,
      );
      ctx.set(
        'fuzz_ops',
        Array.from({ length: 25 }, () => operation(random)),
      );
      try {
        await step(ctx);
        outcomes.ok++;
      } catch (error) {
        // A reject raises its name; a script that runs out of its limits raises JavaScriptError.
        assert.ok(error instanceof AssemblyError, `run ${run}: ${String(error)}`);
        outcomes.rejected++;
      }
    }
    assert.deepEqual(unexpected, [], 'the context threw only the documented VariableError');
    assert.deepEqual(unchangedSince(before), []);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(JSON.stringify(sharedApi), sharedCopy, 'the shared api tree is unchanged');
    assert.ok(outcomes.ok > 20, `runs: ${JSON.stringify(outcomes)}`);
    const usage = pathCacheUsage();
    assert.ok(usage.bytes <= usage.budgetBytes);
    const grown = heapMiB() - started;
    assert.ok(grown < 32, `heap grew by ${grown.toFixed(1)} MiB`);
  });
});
