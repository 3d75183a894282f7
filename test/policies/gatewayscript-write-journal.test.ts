/**
 * The undo record of a pool run's writes (write-journal.ts): after any sequence of writes the
 * context accepts or refuses, undoing leaves the request's variables exactly as they were: the
 * same values, the same objects in the same places, keys in the same order, a raw body still raw.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WriteJournal } from '../../src/policies/gatewayscript/write-journal.ts';
import { RawBody } from '../../src/policies/types.ts';
import { makeContext } from './helpers.ts';

const names = [
  'message',
  'message.body',
  'message.body.a',
  'message.body.a.b',
  'message.body.list[0]',
  'message.body.list[2]',
  'message.headers.X-Orig',
  'message.headers.x-orig',
  'message.headers.New',
  'message.status.code',
  'api.name',
  'api.operation.path',
  'request.headers.x-in',
  'keep',
  'keep.deep.n',
  'keep.deep.m',
  'fresh.a.b',
  'list[0]',
  'list[2]',
  'list[9]',
  'list.x',
  'body.text.x',
];
const values: unknown[] = [1, 'two', { o: 1 }, [1, 2], null, ''];

/** Every object reachable from the variables, by path: its identity, whether frozen, its own keys in order, and leaf values. */
function picture(vars: object): string[] {
  const ids = new Map<object, number>();
  const lines: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value instanceof RawBody) return void lines.push(`${path} raw ${value.bytes.toString()}`);
    if (typeof value !== 'object' || value === null) return void lines.push(`${path} = ${JSON.stringify(value)}`);
    if (!ids.has(value)) ids.set(value, ids.size);
    const keys = Object.keys(value);
    lines.push(`${path} #${ids.get(value)} ${Object.isFrozen(value) ? 'frozen ' : ''}[${keys.join(',')}]`);
    for (const key of keys) walk((value as Record<string, unknown>)[key], `${path}.${key}`);
  };
  walk(vars, '');
  return lines;
}

/** A small seeded generator (mulberry32), so a failure names the seed that found it. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function request() {
  const ctx = makeContext({
    headers: { 'x-in': 'in' },
    vars: { list: [1, 2], keep: { deep: { n: 1 } }, body: { text: 'plain' } },
  });
  ctx.message.headers['X-Orig'] = 'yes';
  ctx.message.headers.Other = 'o';
  ctx.message.body = new RawBody(Buffer.from('{"a":{"b":1},"list":[1,2],"z":0}'), 'application/json');
  return ctx;
}

describe('GatewayScript write journal', () => {
  it('undoing any 300 sequences of writes leaves the variables as they were, in place and in order', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const ctx = request();
      const before = picture(ctx.vars);
      const journal = new WriteJournal(ctx);
      for (let step = 0; step < 12; step++) {
        const name = names[Math.floor(next() * names.length)]!;
        const clear = next() < 0.25;
        journal.before(clear ? 'clear' : 'set', name);
        try {
          // A read between writes caches a parsed body in place, as a script's read would.
          if (next() < 0.3) ctx.get(name);
          if (clear) ctx.clear(name);
          else ctx.set(name, structuredClone(values[Math.floor(next() * values.length)]));
        } catch {
          // Refused (a list's named key, an index past its end): the run would fail there.
        }
      }
      journal.undo();
      assert.deepEqual(picture(ctx.vars), before, `seed ${seed}`);
    }
  });

  it('a list an `add` appends to is kept whole, and its length comes back', () => {
    const ctx = request();
    const list = ctx.get('list') as unknown[];
    const journal = new WriteJournal(ctx);
    journal.before('add', 'list');
    journal.keep(list);
    list.push(3, 4);
    journal.undo();
    assert.equal(ctx.vars.list, list);
    assert.deepEqual(list, [1, 2]);
  });
});
