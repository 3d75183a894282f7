/**
 * The write budget of one GatewayScript run (write-budget.ts): what a script's writes carry to the
 * gateway thread (variables, the body, headers, log lines, rejections) is bounded per run, outside
 * the engine's own memory limit. A review found one run could leave 8 × 8 MiB on the gateway's
 * heap, multiplied by concurrent runs. A run past the budget fails as JavaScriptError (500) and
 * none of its writes stay applied; the write past it never reaches the gateway thread.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import * as engineLimits from '../../src/policies/gatewayscript/engine-limits.ts';
import { InlineTier } from '../../src/policies/gatewayscript/inline.ts';
import { ScriptPool } from '../../src/policies/gatewayscript/pool.ts';
import type { PooledScript } from '../../src/policies/gatewayscript/pool.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import type { Step } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const budget = 1024 * 1024;
const engineBytes = 256 * 1024 * 1024;
const pool = new ScriptPool({ workers: 1, graceMs: 1000, engineBytes, writeBytes: budget });
// The inline tier and its pool share a budget below the inline write queue's own bound (1 MiB).
const smallBudget = 64 * 1024;
const smallPool = new ScriptPool({ workers: 1, graceMs: 1000, engineBytes, writeBytes: smallBudget });
const tier = new InlineTier({ sliceUs: 50_000, writeBytes: smallBudget });

function compile(source: string, through = pool, inline?: InlineTier): Step {
  const input = apiInput();
  input.settings = {
    ...input.settings,
    script: { timeoutMs: 5000, memoryBytes: 16 * 1024 * 1024, pool: through, inline },
  };
  const assembly = { execute: [{ gatewayscript: { version: '2.0.0', title: 'gws', source } }] };
  return compileAssembly(assembly, input, policyRegistry);
}

function context() {
  return makeContext({
    vars: { list: [1, 2] },
    message: { body: 'original', headers: { 'x-orig': 'yes' }, status: { code: 200, reason: 'OK' } },
  });
}

async function run(step: Step): Promise<{ ctx: ReturnType<typeof context>; error?: AssemblyError }> {
  const ctx = context();
  try {
    await step(ctx);
    return { ctx };
  } catch (error) {
    assert.ok(error instanceof AssemblyError, `expected an AssemblyError, got ${String(error)}`);
    return { ctx, error };
  }
}

/** The request as the script found it: what `context()` made. */
function assertUntouched(ctx: ReturnType<typeof context>): void {
  assert.equal(ctx.get('message.body'), 'original');
  assert.deepEqual({ ...(ctx.get('message.headers') as object) }, { 'x-orig': 'yes' });
  assert.deepEqual(ctx.get('message.status'), { code: 200, reason: 'OK' });
  assert.deepEqual(ctx.get('list'), [1, 2]);
  assert.deepEqual(Object.keys(ctx.vars).sort(), ['api', 'list', 'message', 'request']);
}

const overBudget =
  /^GatewayScript policy gws: the script's writes carried more than 1048576 bytes to the gateway in one run/;

// 300 KiB of text: four of them pass the 1 MiB budget, three do not.
const chunk = `var chunk = new Array(300 * 1024 + 1).join('x');`;

describe('GatewayScript write budget', () => {
  after(async () => {
    await pool.close();
    await smallPool.close();
  });

  it('a run whose writes pass the budget fails with JavaScriptError 500 and leaves none of them applied', async () => {
    const { ctx, error } = await run(
      compile(`${chunk}
        context.set('message.headers.x-first', 'one');
        context.message.statusCode = '201 Created';
        context.set('a', chunk);
        // A read sends the writes before it to the gateway thread, which applies them.
        context.get('a');
        apim.setvariable('list', 'three', 'add');
        context.set('message.body', { b: chunk });
        context.set('c', chunk);
        context.set('d', chunk);
        context.set('after', 'never');`),
    );
    assert.equal(error?.errorName, 'JavaScriptError');
    assert.equal(error?.status, 500);
    assert.match(error!.message, overBudget);
    assertUntouched(ctx);
  });

  it('every kind of write applied before the budget was passed is undone, in place', async () => {
    const ctx = makeContext({ vars: { list: [1, 2], keep: { deep: { n: 1 } } } });
    ctx.message.headers['X-Orig'] = 'yes';
    ctx.message.body = new RawBody(Buffer.from('{"a":{"b":1}}'), 'application/json');
    const keep = ctx.vars.keep;
    const message = ctx.vars.message;
    const step = compile(`${chunk}
      context.set('message.body.a.b', 2);
      context.set('message.headers.x-orig', 'changed');
      apim.setvariable('message.headers.X-ORIG', 'more', 'add');
      apim.setvariable('list', 3, 'add');
      context.set('list[3]', 4);
      context.clear('keep.deep.n');
      context.set('keep.deep.m', 5);
      context.set('api.name', 'changed');
      context.set('fresh.tree.x', 1);
      context.clear('message.status');
      if (context.get('list').length !== 4) throw new Error('the writes were not applied before the budget');
      for (;;) context.set('x', chunk);`);
    await assert.rejects(Promise.resolve(step(ctx)), (error: AssemblyError) => overBudget.test(error.message));
    assert.ok(ctx.vars.message === message && ctx.vars.keep === keep, 'the same objects in the same places');
    assert.ok(ctx.message.body instanceof RawBody, 'the body is the bytes received, as before the run');
    assert.deepEqual(ctx.get('message.body'), { a: { b: 1 } });
    assert.deepEqual({ ...ctx.message.headers }, { 'X-Orig': 'yes' });
    assert.deepEqual(ctx.get('message.status'), { code: 200, reason: 'OK' });
    assert.deepEqual(ctx.get('list'), [1, 2]);
    assert.deepEqual(ctx.get('keep'), { deep: { n: 1 } });
    assert.equal(ctx.get('api.name'), 'test');
    assert.deepEqual(Object.keys(ctx.vars).sort(), ['api', 'keep', 'list', 'message', 'request']);
  });

  it('repeated writes of one name count every time', async () => {
    const { ctx, error } = await run(compile(`${chunk} for (var i = 0; i < 4; i++) context.set('same', chunk);`));
    assert.match(error?.message ?? '', overBudget);
    assert.equal(ctx.get('same'), undefined);
  });

  it('writes within the budget are applied as before', async () => {
    const { ctx, error } = await run(
      compile(`${chunk} context.set('a', chunk); context.set('a', chunk);
        context.set('message.body', { n: context.get('a').length }); console.log('done');`),
    );
    assert.equal(error, undefined);
    assert.equal((ctx.get('a') as string).length, 300 * 1024);
    assert.deepEqual(ctx.get('message.body'), { n: 300 * 1024 });
  });

  it('reads are not charged: names and values a script reads stay off the budget', async () => {
    // After a write every read waits for the gateway thread: 2,000 reads of a 1,000-character
    // name and 10 of a 300 KiB value, megabytes read past a budget of 1 MiB.
    const { ctx, error } = await run(
      compile(`${chunk} context.set('a', chunk); var name = 'n' + new Array(1000).join('x'); var n = 0;
        for (var i = 0; i < 2000; i++) context.get(name);
        for (var j = 0; j < 10; j++) n += context.get('a').length;
        context.set('message.body', n);`),
    );
    assert.equal(error, undefined, error?.message);
    assert.equal(ctx.get('message.body'), 10 * 300 * 1024);
  });

  it('a script that catches the budget error still fails, and nothing it writes after is applied', async () => {
    const { ctx, error } = await run(
      compile(`${chunk}
        try { for (var i = 0; i < 10; i++) context.set('n' + i, chunk); } catch (e) { context.set('caught', e.message); }
        context.set('message.body', 'finished');`),
    );
    assert.match(error?.message ?? '', overBudget);
    assert.equal(ctx.get('caught'), undefined);
    assertUntouched(ctx);
  });

  it('log lines and rejections count too', async () => {
    const logged = await run(compile(`${chunk} for (var i = 0; i < 4; i++) console.log(chunk);`));
    assert.match(logged.error?.message ?? '', overBudget);
    const rejected = await run(compile(`${chunk} for (var i = 0; i < 4; i++) context.reject('Custom' + i, chunk);`));
    assert.match(rejected.error?.message ?? '', overBudget);
  });

  it('a value counts as parsed: many small objects cost more than their JSON text', async () => {
    // 300 KB of JSON text, which the gateway holds as 100,000 objects (over 6 MB of its heap).
    const { ctx, error } = await run(
      compile(`var list = []; for (var i = 0; i < 100000; i++) list.push({}); context.set('many', list);`),
    );
    assert.match(error?.message ?? '', overBudget);
    assert.equal(ctx.get('many'), undefined);
  });

  it('the write past the budget never reaches the gateway thread', async () => {
    const seen: string[] = [];
    const script: PooledScript = {
      id: 1_000_001,
      api: 'budget/direct',
      source: `context.set('small', 1); context.get('small');
        context.set('big', new Array(2 * 1024 * 1024 + 1).join('y'));`,
      filename: 'direct.js',
      limits: { timeoutMs: 5000, memoryBytes: 16 * 1024 * 1024 },
    };
    const failure = await pool.run(script, {
      call(op, a, b) {
        seen.push(`${op} ${a} ${b?.length ?? 0}`);
        return op === 'get' ? '1' : undefined;
      },
    });
    assert.equal(failure?.kind, 'writes');
    assert.deepEqual(seen, ['set small 1', 'get small 0']);
  });

  it('the engine answers the next run after a run past its budget', async () => {
    const step = compile(`${chunk} if (context.get('list').length === 2) for (;;) context.set('x', chunk);
      context.set('message.body', 'second');`);
    assert.match((await run(step)).error?.message ?? '', overBudget);
    const second = makeContext({ vars: { list: [1] } });
    await step(second);
    assert.equal(second.get('message.body'), 'second');
  });

  it('the inline tier runs under the same budget: a run past it goes to the pool, which fails it', async () => {
    await tier.ready();
    const before = tier.counters();
    // 80 KiB: under the inline write queue's bound, over this tier's 64 KiB budget.
    const { ctx, error } = await run(
      compile(
        `var part = new Array(40 * 1024 + 1).join('z'); context.set('a', part); context.set('b', part);`,
        smallPool,
        tier,
      ),
    );
    const now = tier.counters();
    assert.equal(now.runs - before.runs, 0, 'the run did not complete inline');
    assert.equal(now.aborts.write - before.aborts.write, 1);
    assert.match(error?.message ?? '', /more than 65536 bytes/);
    assert.equal(ctx.get('a'), undefined);
    assertUntouched(ctx);
  });

  it('PORTICO_SCRIPT_WRITE_BYTES sets the budget: 16 MiB by default, refused when out of range', () => {
    const read = (engineLimits as Record<string, unknown>).scriptWriteBytes as
      ((env: Record<string, string | undefined>) => number) | undefined;
    assert.equal(typeof read, 'function');
    assert.equal(read!({}), 16 * 1024 * 1024);
    assert.equal(read!({ PORTICO_SCRIPT_WRITE_BYTES: '65536' }), 65536);
    for (const bad of ['1000', 'lots', String(2 ** 31)])
      assert.throws(() => read!({ PORTICO_SCRIPT_WRITE_BYTES: bad }), /PORTICO_SCRIPT_WRITE_BYTES/);
  });

  it('the error names the budget only, never a variable or what was written', async () => {
    const { error } = await run(
      compile(`context.set('secret-name', 'secret-value'); context.set('s', new Array(2 * 1024 * 1024).join('q'));`),
    );
    assert.match(error?.message ?? '', overBudget);
    assert.doesNotMatch(error!.message, /secret|qqq/);
  });
});
