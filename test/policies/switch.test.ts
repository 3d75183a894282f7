import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

const mark = (value: string) => ({ 'set-variable': { actions: [{ set: 'branch', value }] } });

function switchOn(...conditions: string[]) {
  return compile({
    execute: [
      {
        switch: {
          version: '2.0.0',
          case: [
            ...conditions.map((condition, i) => ({ condition, execute: [mark(`case${i}`)] })),
            { otherwise: [mark('otherwise')] },
          ],
        },
      },
    ],
  });
}

describe('switch policy', () => {
  it('takes the case whose $header condition holds', async () => {
    const ctx = makeContext({ headers: { 'x-tier': 'gold' } });
    await switchOn(`$header('X-Tier') = 'silver'`, `$header('X-Tier') = 'gold'`)(ctx);
    assert.equal(ctx.get('branch'), 'case1');
  });

  it('matches $httpVerb() and $operationID()', async () => {
    const ctx = makeContext({ verb: 'POST', operationId: 'shipping.calc' });
    await switchOn(`$httpVerb() = 'POST' and $operationID() = 'shipping.calc'`)(ctx);
    assert.equal(ctx.get('branch'), 'case0');
  });

  it('runs otherwise when no condition holds', async () => {
    const ctx = makeContext({ verb: 'GET' });
    await switchOn(`$httpVerb() = 'DELETE'`, `$queryParameter('zip') = '90210'`)(ctx);
    assert.equal(ctx.get('branch'), 'otherwise');
  });

  it('reads $queryParameter() and context variables by path', async () => {
    const ctx = makeContext({ search: '?zip=90210', vars: { xyz_response: { body: { company: 'xyz' } } } });
    await switchOn(`$queryParameter('zip') = '90210' and xyz_response.body.company = 'xyz'`)(ctx);
    assert.equal(ctx.get('branch'), 'case0');
  });

  it('accepts a v5 JavaScript condition', async () => {
    const ctx = makeContext({ verb: 'GET', operationPath: '/path-1', path: '/path-1' });
    await switchOn(`((request.verb==='PUT'))`, `((request.verb==='GET')&&(api.operation.path==='/path-1'))`)(ctx);
    assert.equal(ctx.get('branch'), 'case1');
  });

  it('refuses a JavaScript negation it cannot translate, naming the condition path', () => {
    assert.throws(
      () => switchOn(`!(request.verb==='GET')`),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unsupported-condition' &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].switch.case[0].condition',
    );
  });

  it('refuses a condition that is not JSONata', () => {
    assert.throws(
      () => switchOn(`request.verb = (`),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'condition-syntax',
    );
  });
});

describe('if policy', () => {
  const step = compile({
    execute: [{ if: { condition: `$statusCode() = 200 and message.body.ok = true`, execute: [mark('ran')] } }],
  });

  it('runs execute when the condition holds', async () => {
    const ctx = makeContext({ message: { body: { ok: true } } });
    await step(ctx);
    assert.equal(ctx.get('branch'), 'ran');
  });

  it('skips execute when the condition does not hold', async () => {
    const ctx = makeContext({ message: { body: { ok: false } } });
    await step(ctx);
    assert.equal(ctx.get('branch'), undefined);
  });

  it('requires a condition', () => {
    assert.throws(
      () => compile({ execute: [{ if: { execute: [] } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.if.condition'),
    );
  });
});
