import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

const mark = (value: string) => ({ 'set-variable': { actions: [{ set: 'branch', value }] } });

// The gateway checks case operations against the API's own, as the import does.
const document = {
  paths: {
    '/shipping': { post: { operationId: 'shipping.calc' } },
    '/stores': { get: { operationId: 'get.stores' }, post: { operationId: 'other' } },
  },
};

const step = compile(
  {
    execute: [
      {
        'operation-switch': {
          version: '2.0.0',
          case: [
            { operations: ['shipping.calc'], execute: [mark('shipping')] },
            { operations: [{ verb: 'get', path: '/stores' }], execute: [mark('stores')] },
          ],
          otherwise: [mark('otherwise')],
        },
      },
    ],
  },
  document,
);

describe('operation-switch policy', () => {
  it('runs the case naming the operationId', async () => {
    const ctx = makeContext({ operationId: 'shipping.calc', path: '/shipping' });
    await step(ctx);
    assert.equal(ctx.get('branch'), 'shipping');
  });

  it('runs the case naming the verb and path, comparing the verb case-insensitively', async () => {
    const ctx = makeContext({ verb: 'GET', operationId: 'get.stores', path: '/stores' });
    await step(ctx);
    assert.equal(ctx.get('branch'), 'stores');
  });

  it('runs otherwise for another operation', async () => {
    const ctx = makeContext({ verb: 'POST', operationId: 'other', path: '/stores' });
    await step(ctx);
    assert.equal(ctx.get('branch'), 'otherwise');
  });

  it('refuses an operation that is neither an id nor a verb/path pair, naming its path', () => {
    assert.throws(
      () =>
        compile({
          execute: [{ 'operation-switch': { case: [{ operations: [{ verb: 'GET' }], execute: [] }] } }],
        }),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.path.startsWith('$.x-ibm-configuration.assembly.execute[0].operation-switch.case[0].operations[0]'),
    );
  });

  it('refuses an operation-switch nested in a switch', () => {
    assert.throws(
      () =>
        compile({
          execute: [{ switch: { case: [{ condition: 'true', execute: [{ 'operation-switch': { case: [] } }] }] } }],
        }),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'invalid-nesting',
    );
  });
});
