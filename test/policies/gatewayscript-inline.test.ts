/**
 * Issue 18: the GatewayScript inline tier (inline.ts). A short script runs on the gateway thread;
 * anything the tier cannot finish exactly as the pool would (a slice used up, a read after a
 * write, a list-index write, a deep stack) goes to the pool from scratch with nothing applied.
 * Each test compares a response through the inline tier with the pool alone, and reads the
 * tier's counters to show which path the run took.
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import { after, before, describe, it } from 'node:test';
import { loadSettings } from '../../src/config/config.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { InlineTier } from '../../src/policies/gatewayscript/inline.ts';
import type { InlineCounts } from '../../src/policies/gatewayscript/inline.ts';
import { ScriptPool } from '../../src/policies/gatewayscript/pool.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import type { Step } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const pool = new ScriptPool({ workers: 2, graceMs: 1000, engineBytes: 256 * 1024 * 1024 });
// The default slice, for the runs that must use it up; a wide one where a run must finish inline
// even on a loaded machine (a descheduled thread uses up a 1 ms slice).
const tier = new InlineTier({ sliceUs: 1000 });
const wide = new InlineTier({ sliceUs: 50_000 });

function compile(source: string, inline: InlineTier | undefined, timeoutMs = 2000): Step {
  const input = apiInput();
  input.settings = { ...input.settings, script: { timeoutMs, memoryBytes: 16 * 1024 * 1024, pool, inline } };
  const assembly = { execute: [{ gatewayscript: { version: '2.0.0', title: 'gws', source } }] };
  return compileAssembly(assembly, input, policyRegistry);
}

/** Everything a script can change that a response or a log shows. */
interface Seen {
  error?: { name: string; status: number; reason?: string; message: string };
  body: unknown;
  headers: unknown;
  status: unknown;
  vars: Record<string, unknown>;
  logs: Array<{ level: number; msg: string; policy: string }>;
  requestBody: unknown;
}

async function observe(step: Step): Promise<Seen> {
  const ctx = makeContext({
    verb: 'POST',
    headers: { 'x-a': 'one', 'content-type': 'application/json' },
    parameters: { zip: '90210' },
    vars: { list: [1, 2] },
  });
  (ctx.vars.request as Record<string, unknown>).body = new RawBody(Buffer.from('{"deep":{"n":7}}'), 'application/json');
  const logs: Seen['logs'] = [];
  const stream = { write: (line: string) => void logs.push(JSON.parse(line) as Seen['logs'][number]) };
  (ctx as unknown as { log: unknown }).log = pino({ level: 'debug', base: undefined, timestamp: false }, stream);
  let error: Seen['error'];
  try {
    await step(ctx);
  } catch (caught) {
    assert.ok(caught instanceof AssemblyError, `expected an AssemblyError, got ${String(caught)}`);
    error = { name: caught.errorName, status: caught.status, reason: caught.reason, message: caught.message };
  }
  const vars = Object.fromEntries(['x', 'y', 'seq', 'list', 'gone'].map((name) => [name, ctx.get(name)]));
  // Whether the raw request body was parsed and cached (read-ahead.ts): a read must leave the same.
  const requestBody = (ctx.vars.request as Record<string, unknown>).body;
  return {
    error,
    body: ctx.get('message.body'),
    headers: { ...(ctx.get('message.headers') as object) },
    status: ctx.get('message.status'),
    vars,
    logs: logs.map(({ level, msg, policy }) => ({ level, msg, policy })),
    requestBody: requestBody instanceof RawBody ? 'raw' : requestBody,
  };
}

/** The same script through the inline tier and through the pool alone, and what the tier did. */
async function both(source: string, through = wide): Promise<{ inline: Seen; pooled: Seen; did: InlineCounts }> {
  const before = through.counters();
  const inline = await observe(compile(source, through));
  const did = delta(before, through.counters());
  const pooled = await observe(compile(source, undefined));
  return { inline, pooled, did };
}

function delta(before: InlineCounts, after: InlineCounts): InlineCounts {
  const aborts = Object.fromEntries(
    Object.entries(after.aborts).map(([reason, n]) => [
      reason,
      n - before.aborts[reason as keyof InlineCounts['aborts']],
    ]),
  ) as InlineCounts['aborts'];
  return {
    runs: after.runs - before.runs,
    aborts,
    demotions: after.demotions - before.demotions,
    demoted: after.demoted - before.demoted,
    overruns: after.overruns - before.overruns,
    unready: after.unready - before.unready,
    replaced: after.replaced - before.replaced,
  };
}

function aborted(counts: InlineCounts): string[] {
  return Object.entries(counts.aborts).flatMap(([reason, n]) => (n > 0 ? [`${reason}:${n}`] : []));
}

describe('issue 18: GatewayScript inline tier', () => {
  before(() => Promise.all([tier.ready(), wide.ready()]));
  after(() => pool.close());

  const finalInline: Record<string, string> = {
    reads: `context.message.body.write({ verb: context.get('request.verb'), zip: context.request.parameters.zip,
      a: context.request.header.get('X-A'), missing: context.get('nothing.here') });`,
    'writes and headers': `context.message.header.set('X-One', '1');
      apim.setvariable('message.headers.x-two', '2', 'add'); apim.setvariable('message.headers.x-two', '3', 'add');
      apim.setvariable('list', 3, 'add'); context.set('x', { n: 1 }); context.clear('gone');
      context.message.statusCode = '201 Created'; apim.output('application/xml');`,
    'body write': `context.message.body.write({ a: [1, 2, 3], s: 'é' });`,
    'body read (parsed and cached as a read would)': `context.request.body.readAsJSON(function (error, value) {
      context.message.body.write({ error: error, value: value }); });`,
    reject: `context.message.statusCode = '404 Not Found'; context.reject('NotFound', 'nothing there');
      context.set('x', 'after the reject');`,
    'apim.error': `apim.error('Teapot', 418, 'I am a teapot', 'short and stout'); context.set('y', 2);`,
    console: `console.log('hello', { a: 1 }); console.warn('careful'); console.error('bad'); console.debug('quiet');`,
    'an exception after writes': `context.set('x', 1); console.info('before'); throw new TypeError('boom');`,
    'a refused name, caught': `try { context.set('a.__proto__.b', 1); } catch (e) { context.set('message.body', e.message); }`,
    'a write the context refuses when applied': `context.set('y', 'first'); context.set('list.name', 2); context.set('x', 'never');`,
    'promise jobs': `Promise.resolve(2).then(function (v) { context.set('message.body', { v: v }); });
      (async function () { await null; context.set('y', 3); })();`,
    'status code only': `context.message.statusCode = 503;`,
  };
  for (const [name, source] of Object.entries(finalInline)) {
    it(`${name}: the same outcome inline as in the pool, and finished inline`, async () => {
      const { inline, pooled, did } = await both(source);
      assert.deepEqual(inline, pooled);
      assert.equal(did.runs, 1, `ran inline (aborts: ${aborted(did).join(', ')})`);
      assert.deepEqual(aborted(did), []);
    });
  }

  it('a read after a write, a list-index write and deep recursion go to the pool and answer as the pool does', async () => {
    const cases: Array<[string, string]> = [
      ['read', `context.set('x', 5); context.message.body.write({ x: context.get('x') });`],
      [
        'write',
        `try { context.set('list[5]', 3); } catch (e) { context.set('message.body', e.message); } context.set('y', 1);`,
      ],
      ['write', `context.set('list[1]', 'two'); context.set('message.body', 'ok');`],
      // About 800 nested calls: past 32 KiB of QuickJS stack, within the worker's 256 KiB.
      ['stack', `function f(n) { return n === 0 ? 0 : f(n - 1) + 1; } context.set('message.body', { depth: f(800) });`],
    ];
    for (const [reason, source] of cases) {
      const { inline, pooled, did } = await both(source);
      assert.deepEqual(inline, pooled, source);
      assert.deepEqual(aborted(did), [`${reason}:1`], source);
      assert.equal(did.runs, 0);
    }
  });

  it('writes before a run past its slice are applied once, by the pool run only', async () => {
    // QuickJS checks its interrupt handler every ~10 000 steps: a 5 ms spin could end before the
    // first check on a slow machine and finish inline; 50 ms reaches it on any (1 fail in 6 runs).
    const source = `context.set('message.headers.x-first', '1'); apim.setvariable('message.headers.x-add', 'a', 'add');
      apim.setvariable('list', 9, 'add'); console.log('once');
      var end = Date.now() + 50; while (Date.now() < end) {}
      context.set('message.headers.x-second', '2');`;
    const { inline, pooled, did } = await both(source, tier);
    assert.deepEqual(aborted(did), ['slice:1']);
    assert.deepEqual(inline, pooled);
    const headers = inline.headers as Record<string, unknown>;
    assert.equal(headers['x-first'], '1');
    assert.equal(headers['x-add'], 'a');
    assert.equal(headers['x-second'], '2');
    assert.deepEqual(inline.vars.list, [1, 2, 9]);
    assert.equal(inline.logs.filter((line) => line.msg === 'once').length, 1);
  });

  it('100,000-deep nesting and runaway recursion do not crash the process and answer as the pool does', async () => {
    const sources = [
      `var s = ''; for (var i = 0; i < 7; i++) s += '[[[[[[[[[['; s = s.repeat(1430); context.set('x', JSON.parse(s + s.replace(/\\[/g, ']')));`,
      `JSON.parse('['.repeat(100000) + ']'.repeat(100000));`,
      `function f() { return f() + 1; } f();`,
      `var o = {}; for (var i = 0; i < 100000; i++) o = { a: o }; JSON.stringify(o);`,
      `eval('['.repeat(100000));`,
    ];
    for (const source of sources) {
      const { inline, pooled, did } = await both(source);
      assert.deepEqual(inline, pooled, source);
      assert.equal(did.runs, 0, source);
    }
    // The tier still works after them (a fresh module if one broke).
    await wide.ready();
    const { inline, pooled } = await both(finalInline.reads!);
    assert.deepEqual(inline, pooled);
  });

  it('a spinning script leaves the event loop free, times out with the pool error, and is demoted', async () => {
    // Spins on POST (what observe sends); a GET first compiles the script inline, once per
    // script (docs/policies.md: that compile is on the gateway thread).
    const source = `if (context.get('request.verb') === 'POST') { while (true) {} }`;
    const step = compile(source, tier);
    await step(makeContext());
    const before = tier.counters();
    let worst = 0;
    let done = false;
    const probe = (async () => {
      while (!done) {
        const started = performance.now();
        await new Promise((resolve) => setTimeout(resolve, 5));
        worst = Math.max(worst, performance.now() - started - 5);
      }
    })();
    const first = await observe(step);
    done = true;
    await probe;
    assert.ok(worst < 100, `the event loop was held ${worst.toFixed(0)} ms`);
    const pooled = await observe(compile(source, undefined));
    assert.deepEqual(first, pooled);
    assert.equal(first.error?.message, 'GatewayScript policy gws: the script ran longer than its limit of 2000 ms');
    const once = delta(before, tier.counters());
    assert.deepEqual(aborted(once), ['slice:1']);
    assert.equal(once.demotions, 1);
    // Demoted: the next run goes straight to the pool, and aborts nothing inline.
    const second = await observe(step);
    assert.deepEqual(second.error, first.error);
    const twice = delta(before, tier.counters());
    assert.deepEqual(aborted(twice), ['slice:1']);
    assert.equal(twice.demoted, 1);
  });

  it('a demoted script is tried inline again after its back-off, and a success resets it', async () => {
    // Slow only while x-slow is set: the first run is abandoned, the later ones are fast (well
    // within a 50 ms slice even on a loaded machine).
    const step = compile(
      `if (context.get('request.headers.x-slow')) { var end = Date.now() + 200; while (Date.now() < end) {} }
       context.set('message.body', 'done');`,
      wide,
    );
    await step(makeContext());
    const before = wide.counters();
    const slow = makeContext({ headers: { 'x-slow': '1' } });
    await step(slow);
    assert.equal(slow.get('message.body'), 'done');
    for (let i = 0; i < 17; i++) {
      const ctx = makeContext();
      await step(ctx);
      assert.equal(ctx.get('message.body'), 'done');
    }
    const did = delta(before, wide.counters());
    assert.deepEqual(aborted(did), ['slice:1'], JSON.stringify(did));
    assert.equal(did.demoted, 16);
    assert.equal(did.runs, 1);
  });
  it('is off unless PORTICO_SCRIPT_INLINE_US is set (it cannot interrupt one native call)', async () => {
    assert.equal(loadSettings({}, { dataDir: '/tmp/portico-inline-default' }).scriptInlineUs, 0);
    assert.equal(
      loadSettings({ PORTICO_SCRIPT_INLINE_US: '1000' }, { dataDir: '/tmp/portico-inline-on' }).scriptInlineUs,
      1000,
    );
    // Why: with the tier on, one native call over a sparse array holds the gateway thread far
    // past the slice (the interrupt handler is not called inside it); the tier only notices after.
    const step = compile(`var a = []; a.length = 3e6; context.set('x', a.indexOf(1));`, tier);
    await step(makeContext());
    const before = tier.counters();
    const ctx = makeContext();
    await step(ctx);
    assert.equal(ctx.get('x'), -1);
    assert.equal(delta(before, tier.counters()).overruns, 1);
  });
  it('interrupts a catastrophic regular expression at its slice (docs: regular expressions are interrupted)', async () => {
    // Backtracks on POST only: a GET first compiles the script inline (its first run is not
    // counted as an overrun). A 1 s pool limit keeps the test short: the pool run then times out.
    const source = `if (context.get('request.verb') === 'POST') context.set('x', /^(a+)+$/.test('${'a'.repeat(29)}!'));`;
    const step = compile(source, tier, 1000);
    await step(makeContext());
    const before = tier.counters();
    const started = performance.now();
    const ctx = makeContext({ verb: 'POST' });
    await assert.rejects(async () => step(ctx), /longer than its limit of 1000 ms/);
    const did = delta(before, tier.counters());
    assert.deepEqual(aborted(did), ['slice:1'], JSON.stringify(did));
    assert.equal(did.overruns, 0, 'the backtracking held the gateway thread past the slice');
    assert.ok(performance.now() - started < 5000);
  });
});
