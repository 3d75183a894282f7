/**
 * Issue 18: a script's writes go to the main thread without a round trip (worker.ts), so a
 * script with N writes no longer waits N turns of the gateway's busy event loop. These tests
 * hold the semantics that must not change with it: order, refused names throwing at the call,
 * and a write the main thread refuses failing the run as an uncaught exception would.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { ScriptPool } from '../../src/policies/gatewayscript/pool.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import type { Step } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const pool = new ScriptPool({ workers: 1, graceMs: 1000, engineBytes: 256 * 1024 * 1024 });

function script(source: string): Step {
  const input = apiInput();
  input.settings = { ...input.settings, script: { timeoutMs: 2000, memoryBytes: 16 * 1024 * 1024, pool } };
  const assembly = { execute: [{ gatewayscript: { version: '2.0.0', title: 'gws', source } }] };
  return compileAssembly(assembly, input, policyRegistry);
}

async function run(source: string): Promise<{ ctx: ReturnType<typeof makeContext>; error?: AssemblyError }> {
  const ctx = makeContext();
  try {
    await script(source)(ctx);
    return { ctx };
  } catch (error) {
    assert.ok(error instanceof AssemblyError, `expected an AssemblyError, got ${String(error)}`);
    return { ctx, error };
  }
}

describe('issue 18: GatewayScript writes without a round trip', () => {
  after(() => pool.close());

  // Since the read-ahead (gatewayscript-read-ahead.test.ts) the read before the first write waits no more either.
  it('a script with three writes and two reads keeps a worker waiting once, not five times', async () => {
    await run(`var x = 1;`);
    const before = pool.opCounts();
    const { ctx, error } = await run(`var zip = context.get('request.verb');
      context.set('message.headers.x-zip', zip);
      context.set('message.status.code', 201);
      context.message.body.write({ zip: zip, seen: context.get('message.headers.x-zip') });`);
    assert.equal(error, undefined);
    const after = pool.opCounts();
    const used = { answered: after.answered - before.answered, applied: after.applied - before.applied };
    assert.deepEqual(used, { answered: 1, applied: 3 });
    assert.deepEqual(ctx.get('message.body'), { zip: 'GET', seen: 'GET' });
    assert.equal(ctx.get('message.status.code'), 201);
  });

  it('keeps the order of writes, past the in-flight bound, and a later read sees every one', async () => {
    const { ctx, error } = await run(`
      for (var i = 0; i < 300; i++) { context.set('seq', i); apim.setvariable('list', i, 'add'); }
      context.clear('gone'); context.set('gone', 'no'); context.clear('gone');
      context.set('message.body', { last: context.get('seq'), count: context.get('list').length });`);
    assert.equal(error, undefined);
    assert.deepEqual(
      ctx.get('list'),
      Array.from({ length: 300 }, (_, i) => i),
    );
    assert.deepEqual(ctx.get('message.body'), { last: 299, count: 300 });
    assert.equal(ctx.get('gone'), undefined);
  });

  it('a name the context refuses throws at the call, and the script can catch it', async () => {
    const { ctx, error } = await run(`var caught = [];
      function attempt(f) { try { f(); caught.push('no exception'); } catch (e) { caught.push(e.message); } }
      attempt(function () { context.set('a.__proto__.b', 1); });
      attempt(function () { apim.setvariable('constructor.x', 1, 'add'); });
      attempt(function () { context.clear('x.prototype'); });
      attempt(function () { context.set(new Array(1100).join('n'), 1); });
      context.set('list', [1]);
      attempt(function () { context.set('list[5]', 2); });
      context.set('message.body', caught);`);
    assert.equal(error, undefined);
    const caught = ctx.get('message.body') as string[];
    assert.equal(caught.length, 5);
    assert.match(caught[0], /cannot be written: the segment "__proto__" would reach a prototype/);
    assert.match(caught[1], /cannot be written: the segment "constructor" would reach a prototype/);
    assert.match(caught[2], /cannot be cleared: the segment "prototype" would reach a prototype/);
    assert.match(caught[3], /cannot be written: the name is longer than 1024 characters/);
    assert.match(caught[4], /cannot be written: "5" is not an index of the list \(0 to 1\)/);
  });

  it('a write the main thread refuses after it was sent fails the run as an uncaught exception would', async () => {
    // `list.x` under a list: only the main thread knows `list` is one, so the write went unanswered.
    const sent = await run(`context.set('list', [1]); context.set('list.x', 2); context.set('after', 1);`);
    // The same refusal on a write that waits (a list index), uncaught.
    const waited = await run(`context.set('list', [1]); context.set('list[5]', 2); context.set('after', 1);`);
    assert.equal(sent.error?.errorName, 'JavaScriptError');
    assert.equal(sent.error?.status, 500);
    const shape = new RegExp(
      '^GatewayScript policy gws: Error: The context variable "[^"]+" cannot be written: ' +
        '"[^"]+" is not an index of the list \\(0 to 1\\)$',
    );
    assert.match(sent.error!.message, shape);
    assert.match(waited.error!.message, shape);
    assert.match(sent.error!.message, /"list\.x"/);
    assert.equal(sent.ctx.get('after'), undefined, 'nothing the script did after the refused write took effect');
    assert.equal(waited.ctx.get('after'), undefined);
  });

  it('a read after a refused write raises it in the script, which stops there', async () => {
    const { ctx, error } = await run(`context.set('list', [1]); context.set('list.x', 2);
      try { context.get('request.verb'); } catch (e) { context.set('caught', e.message); }`);
    assert.match(error?.message ?? '', /"list.x" cannot be written/);
    assert.equal(ctx.get('caught'), undefined);
  });
});
