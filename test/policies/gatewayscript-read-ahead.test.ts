/**
 * Issue 18: the variables a script names literally are read on the gateway thread when the run
 * is handed to a worker and sent with it (read-ahead.ts), so those reads wait for no turn of the
 * gateway's event loop. These tests hold what must not change with it: a read ahead returns
 * what the gateway thread would have answered, a script sees its own writes, a body is parsed
 * in the context only when the script really reads it, and large or binary bodies read the same.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { ScriptPool } from '../../src/policies/gatewayscript/pool.ts';
import { readAheadLimits, readAheadNames } from '../../src/policies/gatewayscript/read-ahead.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import type { Step } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';
import type { ContextOptions } from './helpers.ts';

const pool = new ScriptPool({ workers: 1, graceMs: 1000, engineBytes: 256 * 1024 * 1024 });

function compile(execute: unknown[]): Step {
  const input = apiInput();
  input.settings = { ...input.settings, script: { timeoutMs: 2000, memoryBytes: 32 * 1024 * 1024, pool } };
  return compileAssembly({ execute }, input, policyRegistry);
}

function script(source: string): Step {
  return compile([{ gatewayscript: { version: '2.0.0', title: 'gws', source } }]);
}

type Ctx = ReturnType<typeof makeContext>;

/** Runs `step` on a fresh context; the ops it cost, by kind. */
async function run(
  step: Step,
  prepare: (ctx: Ctx) => void = () => undefined,
  options: ContextOptions = {},
): Promise<{ ctx: Ctx; used: { answered: number; applied: number; readAhead: number } }> {
  const ctx = makeContext(options);
  prepare(ctx);
  const before = pool.opCounts();
  try {
    await step(ctx);
  } catch (error) {
    assert.ok(error instanceof AssemblyError, `expected an AssemblyError, got ${String(error)}`);
    throw error;
  }
  const now = pool.opCounts();
  const used = {
    answered: now.answered - before.answered,
    applied: now.applied - before.applied,
    readAhead: now.readAhead - before.readAhead,
  };
  return { ctx, used };
}

/** The raw bytes of a body, as invoke and the gateway leave it until its first read. */
function raw(value: string | Buffer, contentType: string): RawBody {
  return new RawBody(Buffer.isBuffer(value) ? value : Buffer.from(value), contentType);
}

function vars(ctx: Ctx): Record<string, Record<string, unknown>> {
  return ctx.vars as Record<string, Record<string, unknown>>;
}

// The demo's get.stores script (examples/accessories/logistics.yaml).
const getStores = `var geocode = context.get('geocode_response.body');
  if (typeof geocode === 'string') { geocode = JSON.parse(geocode); }
  var results = geocode && geocode.results;
  if (!results || results.length === 0) {
    context.reject('NotFound', 'No location found for the zip code');
    context.message.statusCode = '404 Not Found';
  } else {
    var location = results[0].geometry.location;
    var mapsUrl = context.get('api.properties.maps_url');
    context.message.header.set('Content-Type', 'application/json');
    context.message.body.write({ maps_link: mapsUrl + '?q=' + location.lat + ',' + location.lng });
  }`;

describe('issue 18: GatewayScript reads ahead', () => {
  after(() => pool.close());

  it('finds the names a script reads literally, getters and body readers included', () => {
    const names = readAheadNames(`var a = context.get('x.y'); apim.getvariable("request.headers.x-id");
      context.request.header.get('X-Trace'); context.message.header.get('bad name');
      context.request.verb; context.request.contentType; context.message.statusCode = 404;
      context.message.reasonPhrase; context.request.body.readAsJSON(function () {});
      session.input.readAsBuffer(function () {}); context.get(dynamic); context.set('w', 1);`);
    assert.deepEqual(names, [
      'x.y',
      'request.headers.x-id',
      'request.headers["X-Trace"]',
      'request.verb',
      'request.content-type',
      'message.status.reason',
      'request.body',
      'message.body',
    ]);
    const many = Array.from({ length: 50 }, (_, i) => `context.get('v${i}');`).join('\n');
    assert.equal(readAheadNames(many).length, readAheadLimits.names);
  });

  it('get.stores waits for the gateway thread 0 times, and the context keeps the body it read as its bytes', async () => {
    const step = script(getStores);
    const geocode = JSON.stringify({
      status: 'OK',
      results: [{ geometry: { location: { lat: 34.09, lng: -118.4 } } }],
    });
    const { ctx, used } = await run(step, (ctx) => {
      ctx.set('geocode_response', { body: raw(geocode, 'application/json'), headers: {} });
      ctx.set('api.properties.maps_url', 'https://maps.example');
    });
    assert.deepEqual(used, { answered: 0, applied: 2, readAhead: 2 });
    assert.deepEqual(ctx.get('message.body'), { maps_link: 'https://maps.example?q=34.09,-118.4' });
    assert.equal(ctx.get('message.headers.content-type'), 'application/json');
    // The script parsed the body's own text (prelude.ts, rawJsonMark); the context was not changed.
    const body = vars(ctx).geocode_response!.body;
    assert.ok(body instanceof RawBody);
    assert.equal(body.bytes.toString(), geocode);
  });

  it('a whole JSON body a script only reads keeps its bytes, read ahead or after a write; it reads as its parse', async () => {
    const text = '{"n": 12345678901234567890, "big": 1e400}';
    const step = script(`var first = context.get('message.body');
      context.set('seen', [first.n > 1e19, first.big === Infinity]);
      var again = context.get('message.body');
      context.set('again', [again.n > 1e19, again.big === Infinity]);`);
    const { ctx, used } = await run(step, (ctx) => ctx.set('message.body', raw(text, 'application/json')));
    // The second read follows a write, so the gateway thread answers it.
    assert.equal(used.answered, 1);
    assert.deepEqual(
      [ctx.get('seen'), ctx.get('again')],
      [
        [true, true],
        [true, true],
      ],
    );
    const body = vars(ctx).message!.body;
    assert.ok(body instanceof RawBody, 'the response body is still forwarded as its bytes');
    assert.equal(body.bytes.toString(), text);
  });

  it('a JSON-typed body that does not parse reads as its text; a value inside a body is parsed and cached as before', async () => {
    const step = script(`context.set('whole', context.get('request.body'));
      context.set('inner', context.get('message.body.n'));`);
    const { ctx } = await run(step, (ctx) => {
      ctx.set('request.body', raw('{"unclosed": ', 'application/json'));
      ctx.set('message.body', raw('{"n": 5}', 'application/json'));
    });
    assert.equal(ctx.get('whole'), '{"unclosed": ');
    assert.equal(ctx.get('inner'), 5);
    assert.deepEqual(vars(ctx).message!.body, { n: 5 });
  });

  it("a body cannot forge the mark: its own U+0001 and a __proto__ key read as the gateway's parse would", async () => {
    const forged = '\u0001{"a": 1}';
    const step = script(`var text = context.get('request.body');
      var tree = context.get('message.body');
      context.set('seen', [typeof text, text === '\\u0001{"a": 1}',
        Object.prototype.hasOwnProperty.call(tree, '__proto__'), ({}).polluted === undefined]);`);
    const { ctx } = await run(step, (ctx) => {
      ctx.set('request.body', raw(forged, 'application/json'));
      ctx.set('message.body', raw('{"__proto__": {"polluted": true}}', 'application/json'));
    });
    assert.deepEqual(ctx.get('seen'), ['string', true, true, true]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  // Found by a review (Session 15): the engine takes text as a C string, so a body's own text
  // with a NUL in it reached the script cut at the NUL while the gateway kept (and forwarded) all
  // of it: a guard script refusing "admin" let `{"user":"bob"}\0 {"role":"admin"}` through.
  it('a JSON body with a NUL reaches the script whole, as the gateway holds it', async () => {
    const body = '{"user": "bob"}\u0000 {"role": "admin"}';
    const step = script(`context.message.body.readAsBuffer(function (e, text) {
        context.set('seen', [text.length, /admin/.test(text)]);
        if (/admin/.test(text)) context.reject('Forbidden', 'no admin');
      });`);
    await assert.rejects(
      run(step, (ctx) => ctx.set('message.body', raw(body, 'application/json'))),
      (error: unknown) => error instanceof AssemblyError && /no admin/.test(error.message),
    );
    const read = script(`context.set('seen', context.get('request.body'));`);
    const { ctx } = await run(read, (ctx) => ctx.set('request.body', raw(body, 'application/json')));
    assert.equal(ctx.get('seen'), body);
  });

  it('a body named only in a branch not taken stays raw bytes in the context', async () => {
    const step = script(`if (context.get('request.verb') === 'DELETE') {
        context.message.body.readAsJSON(function (e, v) { context.set('seen', v); });
      }`);
    const { ctx, used } = await run(step, (ctx) =>
      ctx.set('message.body', raw('{"n": 12345678901234567890}', 'application/json')),
    );
    assert.equal(used.answered, 0);
    assert.ok(vars(ctx).message!.body instanceof RawBody, 'the response body is still forwarded as its bytes');
  });

  it('a script sees its own writes, whatever name it reads them by', async () => {
    const step = script(`var before = context.get('message.headers.x-a');
      context.set('message.headers.X-A', 'mine');
      var copy = context.get('tree');
      context.set('tree.inner', 2);
      context.message.body.write({
        before: before,
        header: context.get('message.headers.x-a'),
        headers: context.message.headers,
        copy: copy,
        tree: context.get('tree'),
        verb: context.get('request.verb')
      });`);
    const { ctx, used } = await run(step, (ctx) => {
      ctx.set('message.headers.x-a', 'flow');
      ctx.set('tree', { inner: 1 });
    });
    assert.deepEqual(ctx.get('message.body'), {
      before: 'flow',
      header: 'mine',
      headers: { 'x-a': 'mine' },
      copy: { inner: 1 },
      tree: { inner: 2 },
      verb: 'GET',
    });
    assert.equal(used.readAhead, 1, 'only the read before the first write is answered from the read-ahead');
    assert.equal(used.answered, 5);
  });

  it('reads after writes across ops see every write, in order, on a variable set earlier in the flow', async () => {
    const step = compile([
      { 'set-variable': { version: '2.0.0', actions: [{ set: 'counter', value: '1' }] } },
      {
        gatewayscript: {
          version: '2.0.0',
          title: 'gws',
          source: `var first = context.get('counter');
            apim.setvariable('counter', Number(first) + 1);
            var second = context.get('counter');
            apim.setvariable('log', second, 'add');
            apim.setvariable('log', context.get('counter') + 1, 'add');
            context.set('message.body', { first: first, second: second, log: context.get('log') });`,
        },
      },
    ]);
    const { ctx, used } = await run(step);
    assert.deepEqual(ctx.get('message.body'), { first: '1', second: 2, log: [2, 3] });
    assert.deepEqual(used, { answered: 3, applied: 4, readAhead: 1 });
  });

  it('a read ahead answers what the gateway thread answers, for every kind of value', async () => {
    const reads = [
      'request.verb',
      'request.uri',
      'request.headers',
      'request.headers["X-Trace"]',
      'request.headers.x-trace',
      'request.parameters',
      'request.body',
      'message.body',
      'message.status.code',
      'missing.name',
      'api.name',
    ];
    const literal = reads.map((name) => `out.push(context.get('${name}'));`).join('\n');
    // Names built at run time are not read ahead: every read goes to the gateway thread.
    const dynamic = reads.map((name) => `out.push(context.get(${JSON.stringify(name)}.split('').join('')));`);
    const tail = `context.message.body.write(out);`;
    const binary = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80, 65, 66]);
    const prepare = (ctx: Ctx) => {
      ctx.request.body = raw('{"order": [1, 2, 3]}', 'application/json');
      ctx.set('message.body', raw(binary, 'application/octet-stream'));
    };
    const options = { headers: { 'x-trace': 't-1' }, parameters: { zip: '90210' } };
    const ahead = await run(script(`var out = [];\n${literal}\n${tail}`), prepare, options);
    const asked = await run(script(`var out = [];\n${dynamic.join('\n')}\n${tail}`), prepare, options);
    assert.deepEqual(ahead.used, { answered: 0, applied: 1, readAhead: reads.length });
    assert.deepEqual(asked.used, { answered: reads.length, applied: 1, readAhead: 0 });
    assert.deepEqual(ahead.ctx.get('message.body'), asked.ctx.get('message.body'));
    const out = ahead.ctx.get('message.body') as unknown[];
    assert.deepEqual(out[7], [...binary], 'a binary body reads as its bytes: in a list, their numbers');
    assert.deepEqual(out[6], { order: [1, 2, 3] });
  });

  it('a body larger than the read-ahead budget is read from the gateway thread, whole', async () => {
    const items = Array.from({ length: 40_000 }, (_, i) => ({ i, name: `item-${i}` }));
    const body = JSON.stringify({ items });
    assert.ok(body.length > readAheadLimits.chars);
    const step = script(`context.request.body.readAsJSON(function (error, value) {
        context.set('message.body', { error: error, count: value.items.length, last: value.items[value.items.length - 1] });
      });`);
    const { ctx, used } = await run(step, (ctx) => {
      ctx.request.body = raw(body, 'application/json');
    });
    assert.deepEqual(ctx.get('message.body'), { error: null, count: 40_000, last: { i: 39_999, name: 'item-39999' } });
    assert.deepEqual(used, { answered: 1, applied: 1, readAhead: 0 });
  });

  it('a body within the budget is read ahead, whole', async () => {
    const text = 'x'.repeat(100_000);
    const step = script(`context.set('message.body', { length: context.get('request.body').length });`);
    const { ctx, used } = await run(step, (ctx) => {
      ctx.request.body = raw(text, 'text/plain');
    });
    assert.deepEqual(ctx.get('message.body'), { length: 100_000 });
    assert.deepEqual(used, { answered: 0, applied: 1, readAhead: 1 });
  });

  it('a read ahead served to one run is not served to the next', async () => {
    const step = script(`context.set('message.body', context.get('request.headers.x-caller') || 'none');`);
    const first = await run(step, undefined, { headers: { 'x-caller': 'consumer-a' } });
    const second = await run(step, undefined, { headers: {} });
    assert.equal(first.ctx.get('message.body'), 'consumer-a');
    assert.equal(second.ctx.get('message.body'), 'none');
  });
});
