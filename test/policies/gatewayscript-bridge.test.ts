/**
 * Issue 18: the script's calls into the gateway go through host-bridge.ts, not quickjs-emscripten's
 * generic trampoline. What crosses must be exactly what the script passed and what the host
 * answered (text of any script, undefined, errors the script can catch), the bridge must leak
 * nothing across many runs, and an engine whose internals it does not fit must refuse to build.
 * A run cleans the realm as its own last step; what a promise job leaves after it is still cleaned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newQuickJSWASMModule } from 'quickjs-emscripten';
import { EngineModule } from '../../src/policies/gatewayscript/engine-module.ts';
import { directCaller, installHostBridge } from '../../src/policies/gatewayscript/host-bridge.ts';
import { ScriptSandbox } from '../../src/policies/gatewayscript/sandbox.ts';
import type { ScriptHost } from '../../src/policies/gatewayscript/sandbox.ts';

const limits = { timeoutMs: 2000, memoryBytes: 16 * 1024 * 1024 };
let engine: EngineModule;

before(async () => {
  engine = await EngineModule.load(256 * 1024 * 1024);
});

/** A host that records every call and answers `get` from `values` (JSON text). */
function recordingHost(values: Record<string, string | undefined> = {}) {
  const calls: Array<[string, string | undefined, string | undefined]> = [];
  const host: ScriptHost = {
    call(op, a, b) {
      calls.push([op, a, b]);
      if (op === 'get') return values[a ?? ''];
      if (op === 'set' && a === 'refused') throw new Error(`cannot set ${a}: refused by the host`);
      return undefined;
    },
  };
  return { host, calls };
}

describe('GatewayScript host bridge', () => {
  after(() => undefined);

  it('passes the script’s text both ways unchanged: non-ASCII, escapes, large values, undefined', () => {
    const text = 'héllo wörld — 日本語 🌍 "quoted" \\ back\nslash';
    const big = 'x'.repeat(200_000);
    const { host, calls } = recordingHost({
      text: JSON.stringify(text),
      big: JSON.stringify(big),
      nothing: undefined,
    });
    const sandbox = new ScriptSandbox(
      `var t = context.get('text');
       var b = context.get('big');
       var n = context.get('nothing');
       context.set('echo', t);
       context.set('lengths', [t.length, b.length, typeof n]);
       context.set('unset', undefined);`,
      limits,
      'bridge.js',
      engine,
    );
    assert.equal(sandbox.run(host), undefined);
    sandbox.dispose();
    assert.deepEqual(calls.slice(0, 3), [
      ['get', 'text', undefined],
      ['get', 'big', undefined],
      ['get', 'nothing', undefined],
    ]);
    assert.deepEqual(calls[3], ['set', 'echo', JSON.stringify(text)]);
    assert.deepEqual(calls[4], ['set', 'lengths', JSON.stringify([text.length, big.length, 'undefined'])]);
    // A value the script left undefined arrives as undefined, not as the text "undefined".
    assert.deepEqual(calls[5], ['set', 'unset', undefined]);
  });

  it('passes a host answer that makes the WebAssembly heap grow, whole', () => {
    // The answer is written into the heap after its malloc: a heap that grew for it has a new buffer.
    const before = engine.heapBytes();
    const huge = 'ü'.repeat(12_000_000) + '🌍';
    const { host, calls } = recordingHost({ huge: JSON.stringify(huge) });
    const sandbox = new ScriptSandbox(
      `var h = context.get('huge');
       context.set('check', [h.length, h.charCodeAt(0), h.slice(-2), h.indexOf('x')]);`,
      { timeoutMs: 5000, memoryBytes: 128 * 1024 * 1024 },
      'bridge.js',
      engine,
    );
    assert.equal(sandbox.run(host), undefined);
    sandbox.dispose();
    assert.ok(engine.heapBytes() > before, 'the heap grew during the run');
    assert.deepEqual(calls[1], ['set', 'check', JSON.stringify([huge.length, 0xfc, '🌍', -1])]);
  });

  it('turns a host refusal into an Error the script can catch, with its message', () => {
    const { host, calls } = recordingHost();
    const sandbox = new ScriptSandbox(
      `try { context.set('refused', 1); context.set('after', 'not reached'); }
       catch (e) { context.set('caught', [e instanceof Error, e.message]); }`,
      limits,
      'bridge.js',
      engine,
    );
    assert.equal(sandbox.run(host), undefined);
    sandbox.dispose();
    assert.deepEqual(calls.at(-1), [
      'set',
      'caught',
      JSON.stringify([true, 'cannot set refused: refused by the host']),
    ]);
    assert.ok(!calls.some(([, name]) => name === 'after'));
  });

  it('refuses a host answer with a NUL in it rather than cutting it at the NUL', () => {
    const { host, calls } = recordingHost({ raw: '\u0001{"a":1}\u0000 {"b":2}' });
    const sandbox = new ScriptSandbox(
      `try { context.set('read', context.get('raw')); } catch (e) { context.set('caught', e.message); }`,
      limits,
      'bridge.js',
      engine,
    );
    assert.equal(sandbox.run(host), undefined);
    sandbox.dispose();
    assert.deepEqual(calls.at(-1), [
      'set',
      'caught',
      JSON.stringify('a value with a NUL character cannot cross into the script'),
    ]);
  });

  it('an uncaught host refusal fails the run as an exception naming it', () => {
    const { host } = recordingHost();
    const sandbox = new ScriptSandbox(`context.set('refused', 1);`, limits, 'bridge.js', engine);
    const failure = sandbox.run(host);
    sandbox.dispose();
    assert.equal(failure?.kind, 'exception');
    assert.match(failure?.message ?? '', /refused by the host/);
  });

  it('leaks nothing over many runs: strings in and out, thrown errors, and a clean free at the end', () => {
    const module = engine;
    const value = JSON.stringify({
      results: [{ geometry: { location: { lat: 34.09, lng: -118.41 } } }],
      pad: 'p'.repeat(2000),
    });
    const { host } = recordingHost({ v: value });
    const sandbox = new ScriptSandbox(
      `var v = context.get('v');
       context.set('out', { lat: v.results[0].geometry.location.lat, pad: v.pad });
       try { context.set('refused', 1); } catch (e) { context.set('m', e.message); }`,
      limits,
      'bridge.js',
      module,
    );
    for (let i = 0; i < 500; i++) assert.equal(sandbox.run(host), undefined);
    const heapAfterWarmUp = module.heapBytes();
    // 20 000 runs × (a 2 KB string in, a 2 KB string out, an error thrown): ~100 MB if any of it stayed.
    for (let i = 0; i < 20_000; i++) assert.equal(sandbox.run(host), undefined);
    assert.equal(module.heapBytes(), heapAfterWarmUp, 'the WebAssembly heap did not grow');
    // QuickJS aborts when a runtime is freed with objects still alive: a leaked handle breaks the module.
    sandbox.dispose();
    assert.equal(module.broken, undefined);
  });

  it('a global set by a promise job after the script returned is still cleaned before the next run', () => {
    const { host, calls } = recordingHost();
    // The run cleans up as its last step; a job queued by the script runs after that clean-up.
    const sandbox = new ScriptSandbox(
      `context.set('seen', typeof late);
       Promise.resolve().then(function () { late = 'from the previous run'; });`,
      limits,
      'bridge.js',
      engine,
    );
    assert.equal(sandbox.run(host), undefined);
    assert.equal(sandbox.run(host), undefined);
    sandbox.dispose();
    assert.deepEqual(
      calls.map(([, , value]) => value),
      [JSON.stringify('undefined'), JSON.stringify('undefined')],
    );
  });

  it('refuses to build on an engine whose internals it does not fit', async () => {
    const quickjs = await newQuickJSWASMModule();
    const vm = quickjs.newContext();
    try {
      const stripped = Object.create(vm, { cToHostCallbacks: { value: undefined } }) as typeof vm;
      assert.throws(
        () =>
          installHostBridge(
            stripped,
            'host',
            () => undefined,
            () => vm.undefined,
          ),
        /does not fit this quickjs-emscripten version/,
      );
      const noMemory = Object.create(vm, { memory: { value: undefined } }) as typeof vm;
      assert.throws(() => directCaller(noMemory, vm.undefined), /does not fit this quickjs-emscripten version/);
    } finally {
      vm.dispose();
    }
  });

  it('calls the runner straight through the FFI: its number, its error, and nothing leaked', () => {
    const quickjs = engine.quickjs;
    const runtime = quickjs.newRuntime();
    const vm = runtime.newContext();
    const argument = vm.newString('abc');
    const fns = vm.unwrapResult(
      vm.evalCode(
        `[function (s) { return s.length; }, function (s) { throw new TypeError('no ' + s); }, function () { return { text: 'text' }; }]`,
      ),
    );
    const [length, thrower, text] = [0, 1, 2].map((i) => vm.getProp(fns, i));
    const direct = directCaller(vm, argument);
    for (let i = 0; i < 2000; i++) {
      assert.deepEqual(direct.call(length), { value: 3 });
      const failed = direct.call(thrower);
      assert.ok(failed.error);
      const { name, message } = vm.dump(failed.error) as { name: string; message: string };
      assert.deepEqual([name, message], ['TypeError', 'no abc']);
      failed.error.dispose();
      assert.ok(Number.isNaN((direct.call(text) as { value: number }).value));
    }
    direct.dispose();
    direct.dispose();
    assert.throws(() => direct.call(length), /disposed/);
    for (const handle of [length, thrower, text, fns, argument]) handle.dispose();
    vm.dispose();
    // QuickJS asserts on JS_FreeRuntime when a value is still referenced: a leaked result would abort here.
    runtime.dispose();
  });
});
