import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { PatternRefusal } from '../../../src/definitions/linear-pattern.ts';
import { compileParameter, readParameters } from '../../../src/gateway/parameters.ts';

const header = (name: string, required: boolean) =>
  compileParameter({ name, in: 'header', required, schema: { type: 'string' } });

test('a required header named like an Object.prototype member is missing when the request lacks it', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    assert.throws(
      () => readParameters([header(name, true)], {}, undefined, {}),
      (error: unknown) => error instanceof PorticoError && error.code === 'GW_MISSING_PARAMETER',
      name,
    );
  }
});

test('a parameter named __proto__ is a value, not the prototype of the values', () => {
  const values = readParameters(
    [compileParameter({ name: '__proto__', in: 'query', required: false, schema: { type: 'string' } })],
    {},
    new URLSearchParams('__proto__=x'),
    {},
  );
  assert.equal(Object.getPrototypeOf(values), null);
  assert.deepEqual(Object.keys(values), ['__proto__']);
  assert.equal(values['__proto__'], 'x');
});

test('headers and path parameters are read as before', () => {
  const values = readParameters(
    [
      header('X-Trace', true),
      compileParameter({ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }),
    ],
    { 'x-trace': 'abc' },
    undefined,
    { id: '42' },
  );
  assert.deepEqual({ ...values }, { 'X-Trace': 'abc', id: 42 });
});

// Found by a review (Session 15): the pattern was tested before maxLength, so a value the
// provider capped still reached a pattern whose backtracking is exponential (^([A-Za-z0-9]+ ?)*$:
// 5 s for 31 characters on the gateway's thread). The lengths are checked first now: a value too
// long and not matching is refused for its length, the pattern never run.
test('a value over maxLength is refused for its length before its pattern runs', () => {
  const parameter = compileParameter({
    name: 'q',
    in: 'query',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$', maxLength: 20 },
  } as Parameters<typeof compileParameter>[0]);
  assert.throws(
    () => readParameters([parameter], {}, new URLSearchParams({ q: 'a'.repeat(25) }), {}),
    (error: unknown) => error instanceof PorticoError && /at most 20 characters/.test(error.message),
  );
});

// The same review: without a maxLength, nothing stood between a crafted value and V8's
// backtracking. Provider patterns run on the linear engine now (src/definitions/linear-pattern.ts).
test('a pattern without maxLength answers a crafted value at once', () => {
  const parameter = compileParameter({
    name: 'q',
    in: 'query',
    required: true,
    schema: { type: 'string', pattern: '^([A-Za-z0-9]+ ?)*$' },
  } as Parameters<typeof compileParameter>[0]);
  assert.throws(
    () => readParameters([parameter], {}, new URLSearchParams({ q: `${'a'.repeat(100)}!` }), {}),
    (error: unknown) => error instanceof PorticoError && error.code === 'GW_INVALID_PARAMETER',
  );
  assert.deepEqual(
    { ...readParameters([parameter], {}, new URLSearchParams({ q: 'two words' }), {}) },
    { q: 'two words' },
  );
});

// Found in the same survey: the gateway's own number check, `\d+\.?\d*`, could split a run of
// digits two ways, so digits followed by a letter took quadratic time (140 ms for 8 000, 27 s
// for 100 000).
test('a number parameter of a million digits and a letter is refused at once', () => {
  const parameter = compileParameter({ name: 'n', in: 'header', required: true, schema: { type: 'number' } });
  assert.throws(
    () => readParameters([parameter], { n: `${'1'.repeat(1_000_000)}x` }, undefined, {}),
    (error: unknown) => error instanceof PorticoError && /expected a number/.test(error.message),
  );
  for (const text of ['1', '-1.', '+.5', '1.5e-3', '12E4'])
    assert.equal(readParameters([parameter], { n: text }, undefined, {}).n, Number(text));
});

test('a parameter pattern the linear engine cannot run does not compile', () => {
  assert.throws(
    () =>
      compileParameter({
        name: 'p',
        in: 'query',
        required: false,
        schema: { type: 'string', pattern: '^(?=.*\\d).+$' },
      }),
    (error: unknown) => error instanceof PatternRefusal && error.rule === 'unsupported-pattern',
  );
});
