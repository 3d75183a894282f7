import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

const mark = (name: string, value: string) => ({ 'set-variable': { actions: [{ set: name, value }] } });

describe('throw policy', () => {
  it('fails the flow with status 500 when no catch handles it', async () => {
    const step = compile({ execute: [{ throw: { name: 'NotFound', message: 'Not found' } }] });
    await assert.rejects(
      async () => step(makeContext()),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'NotFound' &&
        error.message === 'Not found' &&
        error.status === 500,
    );
  });

  it('carries error-status-code and error-status-reason (throw 2.1.0)', async () => {
    const step = compile({
      execute: [
        {
          throw: {
            version: '2.1.0',
            name: '404',
            message: 'Not found',
            'error-status-code': 404,
            'error-status-reason': 'Not Found',
          },
        },
      ],
    });
    await assert.rejects(
      async () => step(makeContext()),
      (error: unknown) => error instanceof AssemblyError && error.status === 404 && error.reason === 'Not Found',
    );
  });

  it('is caught by the catch naming it, and finally still runs', async () => {
    const step = compile({
      execute: [{ throw: { name: 'NotFound', message: 'gone' } }, mark('after', 'not reached')],
      catch: [
        { errors: ['OtherError'], execute: [mark('caught', 'other')] },
        { errors: ['NotFound'], execute: [mark('caught', 'by-name')] },
        { default: [mark('caught', 'default')] },
      ],
      finally: [mark('finally', 'ran')],
    });
    const ctx = makeContext();
    await step(ctx);
    assert.deepEqual(
      [ctx.get('caught'), ctx.get('after'), ctx.get('finally'), ctx.get('error.name')],
      ['by-name', undefined, 'ran', 'NotFound'],
    );
  });

  it('goes to the default catch when no case names it', async () => {
    const step = compile({
      execute: [{ throw: { name: 'Teapot' } }],
      catch: [{ default: [mark('caught', 'default')] }],
    });
    const ctx = makeContext();
    await step(ctx);
    assert.equal(ctx.get('caught'), 'default');
  });

  it('refuses a missing name and an impossible status code', () => {
    assert.throws(
      () => compile({ execute: [{ throw: { message: 'x' } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.throw.name'),
    );
    assert.throws(
      () => compile({ execute: [{ throw: { name: 'x', 'error-status-code': 99 } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.throw.error-status-code'),
    );
  });

  it('refuses an unsupported version', () => {
    assert.throws(
      () => compile({ execute: [{ throw: { version: '9.0.0', name: 'x' } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'unsupported-version',
    );
  });
});
