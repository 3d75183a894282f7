/**
 * JSONata regex literals in switch/if conditions and map values run against consumer data on
 * the linear engine (src/policies/linear-regex-engine.ts): a literal V8 would backtrack on is
 * answered at once, `$match`, `$replace`, `$split` and `$contains` give what jsonata gives with
 * V8, a regex parsed from data by `$eval` is refused, and the import names a refused literal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import jsonata from 'jsonata';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { compileExpression } from '../../src/policies/conditions.ts';
import { compile, makeContext } from './helpers.ts';

const mark = (value: string) => ({ 'set-variable': { actions: [{ set: 'branch', value }] } });

function switchOn(condition: string) {
  return compile({
    execute: [
      {
        switch: {
          version: '2.0.0',
          case: [{ condition, execute: [mark('matched')] }, { otherwise: [mark('otherwise')] }],
        },
      },
    ],
  });
}

describe('JSONata regex literals', () => {
  it('answer a crafted header against /^([a-z]+)+$/ in a switch condition at once', async () => {
    // V8 backtracks exponentially here: ~2^40 steps for these 40 letters and a "!".
    const ctx = makeContext({ headers: { 'x-code': `${'a'.repeat(40)}!` } });
    await switchOn(`$match($header('X-Code'), /^([a-z]+)+$/)`)(ctx);
    assert.equal(ctx.get('branch'), 'otherwise');
    const good = makeContext({ headers: { 'x-code': 'abc' } });
    await switchOn(`$match($header('X-Code'), /^([a-z]+)+$/)`)(good);
    assert.equal(good.get('branch'), 'matched');
  });

  it('give what jsonata gives with V8 for $match, $replace, $split and $contains', async () => {
    const expressions = [
      `$match('ab12cd345😀6', /\\d+/)`,
      `$match('2024-05 and 2025-11', /(\\d{4})-(\\d{2})/)`,
      `$match('a1b', /(x)?\\d/)`,
      `$replace('a-b-c 😀x', /(-)|(x)/, '[$1$2]')`,
      `$replace('John Smith', /(\\w+)\\s(\\w+)/, '$2, $1')`,
      `$split('a1b22c333', /\\d+/)`,
      `$split('a,b;c', /[,;]/, 2)`,
      `[$contains('ABC', /b/i), $contains('ABC', /b/), $contains('line\\nnext', /^next/)]`,
      `'gold' ~> /^g(o+)ld$/`,
    ];
    // As JSON: a match object carries a `next` function.
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
    for (const source of expressions) {
      const expected = await jsonata(source).evaluate({});
      assert.deepEqual(plain(await compileExpression(source, '$.value')({}, makeContext())), plain(expected), source);
    }
  });

  it('refuse a regex that $eval parses from data at request time', async () => {
    const evaluate = compileExpression(`$eval($header('x'))`, '$.value');
    const ctx = makeContext({ headers: { x: `$match("aaaa", /(a+)+$/)` } });
    await assert.rejects(
      async () => evaluate(undefined, ctx),
      (error: { message?: string }) => /not compiled with its expression/.test(error.message ?? ''),
    );
  });

  it('are refused at import when the linear engine cannot run them, naming the condition', () => {
    const problems = assemblyProblems(
      {
        execute: [
          { switch: { version: '2.0.0', case: [{ condition: `$match($header('X'), /^(?!admin)/)`, execute: [] }] } },
          { if: { version: '2.0.0', condition: `$contains($header('X'), /a\\-b/)`, execute: [] } },
        ],
      },
      {},
      [],
    );
    assert.deepEqual(
      problems.map((problem) => [problem.path, problem.rule]),
      [
        ['$.x-ibm-configuration.assembly.execute[0].switch.case[0].condition', 'unsupported-pattern'],
        ['$.x-ibm-configuration.assembly.execute[1].if.condition', 'pattern-syntax'],
      ],
    );
  });
});
