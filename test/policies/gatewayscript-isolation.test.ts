/**
 * Issue 12, findings 3, 4, 8 and 11 at the sandbox level: compiled gatewayscript steps on a
 * worker pool of their own, with the time measured on this (the main) thread.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { ScriptPool } from '../../src/policies/gatewayscript/pool.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import type { Step } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const pools: ScriptPool[] = [];

function poolOf(workers: number, graceMs = 300): ScriptPool {
  const pool = new ScriptPool({ workers, graceMs, engineBytes: 256 * 1024 * 1024 });
  pools.push(pool);
  return pool;
}

function script(pool: ScriptPool, source: string, options: { api?: string; timeoutMs?: number } = {}): Step {
  const input = apiInput();
  input.name = options.api ?? 'test';
  input.settings = {
    ...input.settings,
    script: { timeoutMs: options.timeoutMs ?? 300, memoryBytes: 16 * 1024 * 1024, pool },
  };
  return compileAssembly(
    { execute: [{ gatewayscript: { version: '2.0.0', title: 'gws', source } }] },
    input,
    policyRegistry,
  );
}

async function outcome(
  step: Step,
  vars: Record<string, unknown> = {},
): Promise<{ error?: AssemblyError; ms: number; ctx: ReturnType<typeof makeContext> }> {
  const ctx = makeContext({ vars });
  const started = performance.now();
  try {
    await step(ctx);
    return { ms: performance.now() - started, ctx };
  } catch (error) {
    assert.ok(error instanceof AssemblyError, `expected an AssemblyError, got ${String(error)}`);
    return { error, ms: performance.now() - started, ctx };
  }
}

/** The longest this thread's event loop was held while `work` ran (a 5 ms timer's lateness). */
async function loopLag(work: Promise<unknown>): Promise<number> {
  let done = false;
  let worst = 0;
  const probe = (async () => {
    while (!done) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 5));
      worst = Math.max(worst, performance.now() - started - 5);
    }
  })();
  await work;
  done = true;
  await probe;
  return worst;
}

describe('issue 12: GatewayScript sandbox and worker pool', () => {
  after(async () => {
    await Promise.all(pools.map((pool) => pool.close()));
  });

  it('finding 3: an async storm stops at the time limit, without holding the event loop, and the next run is served', async () => {
    const pool = poolOf(2);
    const step = script(
      pool,
      `if (context.get('storm') === true) { async function f() { await null; f(); f(); } f(); } context.set('served', true);`,
    );
    await outcome(step);
    let result: Awaited<ReturnType<typeof outcome>> | undefined;
    const lag = await loopLag(outcome(step, { storm: true }).then((r) => (result = r)));
    assert.equal(result?.error?.errorName, 'JavaScriptError');
    // The storm's promise chain grows the heap; whichever limit it meets first stops it.
    assert.match(result!.error!.message, /longer than its limit of 300 ms|memory limit of 16777216 bytes/);
    assert.ok(result!.ms < 300 + 300 + 200, `stopped after ${result!.ms.toFixed(0)} ms`);
    assert.ok(lag < 100, `event loop held ${lag.toFixed(0)} ms`);
    const next = await outcome(step);
    assert.equal(next.error, undefined);
    assert.equal(next.ctx.get('served'), true);
  });

  it('finding 4: 40 deep [[[… bodies and 35 deep stringify runs leave every script working', async () => {
    const pool = poolOf(2, 100);
    const parse = script(
      pool,
      `context.get('attack') && context.message.body.readAsJSON(function (error) { context.set('parsed', !error); }); context.set('served', true);`,
    );
    const deep = script(pool, `var o = {}; for (var i = 0; i < 100000; i++) o = { a: o }; JSON.stringify(o);`, {
      api: 'other',
      timeoutMs: 200,
    });
    const healthy = script(pool, `context.set('served', true);`, { api: 'third' });
    for (let i = 0; i < 40; i++) {
      const ctx = makeContext({ message: { body: '['.repeat(100_000) }, vars: { attack: true } });
      await Promise.resolve(parse(ctx)).catch(() => undefined);
    }
    for (let i = 0; i < 35; i++) assert.ok((await outcome(deep)).error instanceof AssemblyError);
    for (const step of [parse, healthy]) {
      const result = await outcome(step);
      assert.equal(result.error, undefined, result.error?.message);
      assert.equal(result.ctx.get('served'), true);
    }
  });

  it('finding 8: ten parallel spins hold neither the event loop nor every worker; queued runs past their limit get 503', async () => {
    const pool = poolOf(2);
    const spin = script(pool, `while (true) {}`, { api: 'spinner', timeoutMs: 1000 });
    const other = script(pool, `context.set('served', true);`, { api: 'other' });
    await Promise.all([outcome(other), outcome(other)]);
    const spins = Array.from({ length: 10 }, () => outcome(spin));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const during = await outcome(other);
    assert.equal(during.error, undefined);
    // Without the per-API cap it would wait for a spin to end (≥ 1 s); 2 cores are shared here.
    assert.ok(during.ms < 500, `another API's script waited ${during.ms.toFixed(0)} ms`);
    const lag = await loopLag(Promise.all(spins));
    assert.ok(lag < 100, `event loop held ${lag.toFixed(0)} ms`);
    const results = await Promise.all(spins);
    const statuses = results.map((r) => r.error?.status);
    assert.ok(statuses.filter((s) => s === 500).length >= 1, statuses.join(','));
    const busy = results.filter((r) => r.error?.status === 503);
    assert.ok(busy.length >= 1, 'runs that waited past their own limit were refused');
    assert.match(busy[0]!.error!.message, /no script worker was free within 1000 ms/);
    assert.ok(
      busy.every((r) => r.ms < 1000 + 200),
      'a refused run waited no longer than its own limit',
    );
  });

  it('a worker stuck in one long native call is terminated after limit + grace and replaced', async () => {
    const pool = poolOf(1, 100);
    // Measured: QuickJS's JSON.stringify spends ~1.0 s (1.5 s on a slower machine) in native code
    // on a 100,000-deep object (its cycle check) before its stack overflow, never reaching the
    // interrupt handler. A 300 ms limit and 100 ms grace end it at ~400 ms, well before that (a
    // 1 s limit with 200 ms grace did not, on a machine where the call took 1.0 s), and leave the
    // object's construction (~20–80 ms) inside the limit.
    const stuck = script(
      pool,
      `if (context.get('stuck') === true) { var o = {}; for (var i = 0; i < 100000; i++) o = { a: o }; JSON.stringify(o); }
      context.set('served', true);`,
      { timeoutMs: 300 },
    );
    await outcome(stuck);
    const result = await outcome(stuck, { stuck: true });
    assert.match(result.error?.message ?? '', /longer than its limit of 300 ms and was stopped/);
    assert.ok(result.ms < 300 + 100 + 300, `answered after ${result.ms.toFixed(0)} ms`);
    const next = await outcome(stuck);
    assert.equal(next.error, undefined);
    assert.equal(next.ctx.get('served'), true);
  });

  it('finding 11: a non-configurable global or a late promise job does not reach the next run', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `context.set('seen', (typeof pinned === 'undefined' ? '-' : pinned) + '/' + (typeof late === 'undefined' ? '-' : late));
      Object.defineProperty(globalThis, 'pinned', { value: context.get('who'), configurable: false });
      Promise.resolve().then(function () { globalThis.late = context.get('who'); });`,
    );
    await outcome(step, { who: 'consumer-a' });
    const second = await outcome(step, { who: 'consumer-b' });
    assert.equal(second.error, undefined);
    assert.equal(second.ctx.get('seen'), '-/-');
  });

  // Issue 18: the clean-up skips its walk over the global's keys when the realm looks as sealed
  // (only the permanent keys, the intrinsics as prototype, extensible); each change below must
  // still be caught, and the second consumer must see none of the first one's state.
  it('no global, global prototype or extensibility change of one run reaches the next', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `var change = context.get('change');
      context.set('seen', [typeof implicit, typeof hidden, typeof tier, Object.isExtensible(globalThis)].join('/'));
      if (change === 'implicit') implicit = 'a';
      if (change === 'hidden') Object.defineProperty(globalThis, 'hidden', { value: 'a', configurable: true });
      if (change === 'prototype') Object.setPrototypeOf(globalThis, { tier: 'gold' });
      if (change === 'extensible') Object.preventExtensions(globalThis);`,
    );
    // One change per run, so that each one alone must be caught.
    for (const change of ['implicit', 'hidden', 'prototype', 'extensible']) {
      const first = await outcome(step, { change });
      assert.equal(first.error, undefined, change);
      const inRun = await outcome(step, { change: 'seen' });
      assert.equal(inRun.error, undefined, change);
      assert.equal(inRun.ctx.get('seen'), 'undefined/undefined/undefined/true', `after ${change}`);
    }
  });

  // Intrinsics no global property reaches (found by a review, Session 15): the iterator,
  // generator and async-function prototypes were left writable, so one consumer's request could
  // stash its data on one, or hang a closure on an iterator's next that then ran inside every
  // later request of the script, reading and writing that request's context.
  it('intrinsics reached only through syntax are frozen: no closure or value of one run reaches the next', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `var P = Object.getPrototypeOf;
      var shared = [P([][Symbol.iterator]()), P(''[Symbol.iterator]()), P(new Map().entries()), P(new Set().values()),
        P('a'.matchAll(/a/g)), P(function* () {}), P(P((function* () {})())), P(async function () {}),
        P(async function* () {}), P(P((async function* () {})())), P(Iterator.from({ next: function () { return { done: true }; } })),
        P([].values().map(function (x) { return x; }))];
      // Everything these shared prototypes reach must be frozen.
      var seen = [], open = 0;
      (function walk(v) {
        if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.indexOf(v) >= 0) return;
        seen.push(v);
        if (!Object.isFrozen(v)) open++;
        walk(P(v));
        Reflect.ownKeys(v).forEach(function (k) {
          var d = Object.getOwnPropertyDescriptor(v, k);
          if ('value' in d) walk(d.value); if (d.get) walk(d.get); if (d.set) walk(d.set);
        });
      })(shared);
      var found = shared.map(function (p) { return typeof p.stash; }).join('');
      var values = []; for (var x of ['a', 'b']) values.push(x);
      context.set('seen', [open - 1, found.indexOf('string') < 0, values.join('')].join('/'));
      if (context.get('attack') === true) {
        var who = context.get('who');
        shared.forEach(function (p) { try { p.stash = who; } catch (e) {} });
        var AI = shared[0], next = AI.next;
        try { AI.next = function () { context.set('message.headers.x-hooked', who); return next.call(this); }; } catch (e) {}
      }`,
    );
    const first = await outcome(step, { attack: true, who: 'consumer-a' });
    assert.equal(first.error, undefined);
    // The array holding the prototypes is the run's own (hence the 1 subtracted above).
    assert.equal(first.ctx.get('seen'), '0/true/ab');
    const second = await outcome(step, { attack: false, who: 'consumer-b' });
    assert.equal(second.error, undefined);
    assert.equal(second.ctx.get('seen'), '0/true/ab');
    assert.equal(second.ctx.get('message.headers.x-hooked'), undefined);
  });

  // QuickJS's Math.random is an xorshift64* whose state is one per engine: two values one
  // consumer saw gave away the next consumer's (found by a review, Session 15). This is the
  // reviewer's predictor: it recovers the state from two outputs (12 unknown bits).
  it("Math.random: one consumer's values do not predict the next consumer's", async () => {
    const pool = poolOf(1);
    const step = script(pool, `context.set('ids', [Math.random(), Math.random(), Math.random()]);`);
    const a = (await outcome(step)).ctx.get('ids') as number[];
    const b = (await outcome(step)).ctx.get('ids') as number[];
    for (const value of [...a, ...b]) assert.ok(value >= 0 && value < 1, String(value));
    assert.equal(new Set([...a, ...b]).size, 6);
    const M = (1n << 64n) - 1n;
    const C = 0x2545f4914f6cdd1dn;
    let inverse = 1n;
    for (let i = 0; i < 7; i++) inverse = (inverse * (2n - C * inverse)) & M;
    const step64 = (x: bigint) => {
      x ^= x >> 12n;
      x = (x ^ (x << 25n)) & M;
      return x ^ (x >> 27n);
    };
    const view = new DataView(new ArrayBuffer(8));
    const output = (x: bigint) => {
      view.setBigUint64(0, (0x3ffn << 52n) | (((x * C) & M) >> 12n));
      return view.getFloat64(0) - 1;
    };
    const mantissa = (r: number) => {
      view.setFloat64(0, r + 1);
      return view.getBigUint64(0) & ((1n << 52n) - 1n);
    };
    let predicted: number | undefined;
    for (let low = 0n; low < 4096n && predicted === undefined; low++) {
      const x1 = (((mantissa(a[1]) << 12n) | low) * inverse) & M;
      if (output(step64(x1)) !== a[2]) continue;
      predicted = output(step64(step64(x1)));
    }
    assert.notEqual(predicted, b[0]);
  });

  // Engine state a frozen realm does not cover. quickjs-ng (measured as a replacement engine in
  // Session 15, bench/README.md, and declined) keeps a stack-trace hook and limit in the context
  // behind setters of `Error` that a frozen realm still calls: set in one run, the hook ran in the
  // next with what it had captured (this test failed there). Bellard's QuickJS has neither.
  it('a stack-trace hook, a stack limit or a clock set in one run does not reach the next', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `var taken = [];
      if (context.get('attack') === true) {
        try { Error.prepareStackTrace = function () { taken.push(context.get('who')); return taken.join(','); }; } catch (e) {}
        try { Error.stackTraceLimit = 0; } catch (e) {}
      }
      context.set('seen', [String(new Error('x').stack).indexOf('consumer') < 0, typeof Error.prepareStackTrace,
        typeof Error.stackTraceLimit, typeof performance, 'prepareStackTrace' in Error].join('/'));`,
    );
    const first = await outcome(step, { attack: true, who: 'consumer-a' });
    assert.equal(first.error, undefined);
    const second = await outcome(step, { attack: false, who: 'consumer-b' });
    assert.equal(second.error, undefined);
    assert.equal(second.ctx.get('seen'), 'true/undefined/undefined/undefined/false');
    // The stack is the engine's own again: it names the script's line, not what a hook returned.
    const stack = script(pool, `context.set('stack', String(new Error('x').stack));`);
    const third = await outcome(stack);
    assert.match(String(third.ctx.get('stack')), /:1:/);
  });

  // The intrinsics live on the global's frozen prototype (prelude.ts), so a script can give the
  // global an own property named like one: the clean-up must not use what it finds by name.
  it('a global shadowing Reflect, Object or JSON fools neither the clean-up nor the next run', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `context.set('seen', [typeof leak, typeof JSON.parse, Reflect.ownKeys === Reflect.ownKeys, typeof Object.keys].join('/'));
      if (context.get('attack') === true) {
        // Stand-ins that tell a clean-up looking them up by name what a clean realm looks like.
        var define = Object.defineProperty, proto = Object.getPrototypeOf(globalThis);
        var permanent = Object.getOwnPropertyNames(globalThis);
        var yes = function () { return true; };
        define(globalThis, 'Reflect', { value: { ownKeys: function () { return permanent; }, deleteProperty: yes }, configurable: true });
        define(globalThis, 'Object', { value: { getPrototypeOf: function () { return proto; }, isExtensible: yes, keys: 1 }, configurable: true });
        define(globalThis, 'JSON', { value: 'json', configurable: true });
        globalThis.leak = context.get('who');
      }`,
    );
    const first = await outcome(step, { attack: true, who: 'consumer-a' });
    assert.equal(first.error, undefined);
    const second = await outcome(step, { attack: false });
    assert.equal(second.error, undefined);
    assert.equal(second.ctx.get('seen'), 'undefined/function/true/function');
  });

  it('intrinsics stay read-only and found by name; undeclared names still throw', async () => {
    const pool = poolOf(1);
    const step = script(
      pool,
      `var out = [];
      JSON = 1;
      Object.getPrototypeOf(globalThis).JSON = 2;
      Object.getPrototypeOf(globalThis).added = 3;
      (function () {
        'use strict';
        try { JSON = 1; out.push('assigned'); } catch (e) { out.push(e.name); }
        try { Object.getPrototypeOf(globalThis).added = 3; out.push('assigned'); } catch (e) { out.push(e.name); }
      })();
      try { undeclaredName; out.push('read'); } catch (e) { out.push(e.name); }
      out.push(typeof undeclaredName, typeof JSON, typeof globalThis.JSON, 'added' in globalThis, 'Math' in globalThis, typeof undefined, String(NaN));
      out.push(globalThis.hasOwnProperty('JSON'), Object.getOwnPropertyNames(globalThis).sort().join(','));
      implicitGlobal = 'kept within the run';
      out.push(implicitGlobal, globalThis.implicitGlobal, Object.keys(globalThis).indexOf('implicitGlobal') >= 0);
      context.set('seen', out);`,
    );
    for (let run = 0; run < 2; run++) {
      const result = await outcome(step);
      assert.equal(result.error, undefined);
      // A refused assignment is silent in a sloppy script and a TypeError in strict code, as it was
      // when the intrinsics were the global's own read-only properties.
      assert.deepEqual(result.ctx.get('seen'), [
        'TypeError',
        'TypeError',
        'ReferenceError',
        'undefined',
        'object',
        'object',
        false,
        true,
        'undefined',
        'NaN',
        // docs/policies.md: the standard globals are the prototype's, the global holds the permanent ones.
        false,
        'Infinity,NaN,undefined',
        'kept within the run',
        'kept within the run',
        true,
      ]);
    }
  });
});
