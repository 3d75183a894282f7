import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

function setVariable(actions: unknown[], properties: Record<string, string> = {}) {
  return compile({ execute: [{ 'set-variable': { version: '2.0.0', actions } }] }, {}, properties);
}

describe('set-variable policy', () => {
  it('converts values to number, boolean, object and string', async () => {
    const ctx = makeContext();
    await setVariable([
      { set: 'n', value: '42.5', type: 'number' },
      { set: 'b', value: 'true', type: 'boolean' },
      { set: 'o', value: '{"a":[1,2]}', type: 'object' },
      { set: 's', value: 7, type: 'string' },
      { set: 'any', value: 7 },
    ])(ctx);
    assert.deepEqual(
      [ctx.get('n'), ctx.get('b'), ctx.get('o'), ctx.get('s'), ctx.get('any')],
      [42.5, true, { a: [1, 2] }, '7', 7],
    );
  });

  it('substitutes $(var) from context variables and API properties', async () => {
    const ctx = makeContext({ parameters: { zip: '90210' } });
    await setVariable(
      [{ set: 'message.headers.x-target', value: '$(shipping_svc_url)?to_zip=$(request.parameters.zip)' }],
      { shipping_svc_url: 'http://svc.test/shipping' },
    )(ctx);
    assert.equal(ctx.get('message.headers.X-Target'), 'http://svc.test/shipping?to_zip=90210');
  });

  it('keeps the variable type for a lone $(var) and converts it with type', async () => {
    const ctx = makeContext({ parameters: { amount: '10000' } });
    await setVariable([
      { set: 'copy', value: '$(request.parameters)' },
      { set: 'amount', value: '$(request.parameters.amount)', type: 'number' },
    ])(ctx);
    assert.deepEqual(ctx.get('copy'), { amount: '10000' });
    assert.equal(ctx.get('amount'), 10000);
  });

  it('adds a header value and clears a variable', async () => {
    const ctx = makeContext({
      message: { headers: { 'x-trace': 'a' }, body: undefined, status: { code: 200, reason: 'OK' } },
      vars: { temp: 1 },
    });
    await setVariable([{ add: 'message.headers.X-Trace', value: 'b' }, { clear: 'temp' }])(ctx);
    assert.equal(ctx.get('message.headers.x-trace'), 'a, b');
    assert.equal(ctx.get('temp'), undefined);
  });

  it('raises RuntimeError when a substituted value cannot be converted', async () => {
    const ctx = makeContext({ parameters: { amount: 'ten' } });
    await assert.rejects(
      async () => setVariable([{ set: 'amount', value: '$(request.parameters.amount)', type: 'number' }])(ctx),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'RuntimeError',
    );
  });

  it('refuses a literal that does not convert, naming the action path', () => {
    assert.throws(
      () =>
        setVariable([
          { set: 'ok', value: '1' },
          { set: 'n', value: 'abc', type: 'number' },
        ]),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].set-variable.actions[1].value',
    );
  });

  it('refuses an action with both set and clear', () => {
    assert.throws(
      () => setVariable([{ set: 'a', clear: 'a' }]),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'set-variable-action',
    );
  });
});
