import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

const document = {
  definitions: {
    rates: { type: 'object', required: ['next_day'], properties: { next_day: { type: 'string' } } },
    shipping: { type: 'object', required: ['xyz'], properties: { xyz: { $ref: '#/definitions/rates' } } },
  },
  paths: {
    '/orders': {
      post: {
        operationId: 'orders.create',
        parameters: [
          {
            name: 'body',
            in: 'body',
            schema: {
              type: 'object',
              required: ['sku'],
              properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
            },
          },
        ],
        responses: { 200: { description: 'ok', schema: { $ref: '#/definitions/shipping' } } },
      },
    },
  },
};

describe('validate policy', () => {
  it('passes a body that matches the definition', async () => {
    const step = compile(
      {
        execute: [
          {
            validate: {
              version: '2.0.0',
              'validate-against': 'definition',
              definition: '#/definitions/shipping',
            },
          },
        ],
      },
      document,
    );
    await step(makeContext({ message: { body: { xyz: { next_day: '37.71' } } } }));
  });

  it('fails with ValidateError 422 naming the instance path and rule', async () => {
    const step = compile(
      {
        execute: [
          {
            validate: {
              title: 'check-shipping',
              'validate-against': 'definition',
              definition: '#/definitions/shipping',
            },
          },
        ],
      },
      document,
    );
    await assert.rejects(
      async () => step(makeContext({ message: { body: { xyz: { next_day: 37.71 } } } })),
      (error: unknown) =>
        error instanceof AssemblyError &&
        error.errorName === 'ValidateError' &&
        error.status === 422 &&
        error.policy === 'check-shipping' &&
        /body\/xyz\/next_day must be string \(type/.test(error.message),
    );
  });

  it('validates the request body against the operation body parameter', async () => {
    const step = compile({ execute: [{ validate: { 'validate-against': 'body-param' } }] }, document);
    await step(
      makeContext({
        verb: 'POST',
        path: '/orders',
        operationId: 'orders.create',
        message: { body: { sku: 'a', qty: 2 } },
      }),
    );
    await assert.rejects(
      async () =>
        step(
          makeContext({
            verb: 'POST',
            path: '/orders',
            operationId: 'orders.create',
            message: { body: { sku: 'a', qty: 0 } },
          }),
        ),
      (error: unknown) => error instanceof AssemblyError && /qty must be >= 1 \(minimum/.test(error.message),
    );
  });

  it('validates a response against the schema for its status code', async () => {
    const step = compile({ execute: [{ validate: { 'validate-against': 'response-param' } }] }, document);
    await assert.rejects(
      async () =>
        step(makeContext({ verb: 'POST', path: '/orders', operationId: 'orders.create', message: { body: {} } })),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'ValidateError' && /required/.test(error.message),
    );
  });

  it('refuses a definition that does not resolve, naming the path', () => {
    assert.throws(
      () => compile({ execute: [{ validate: { definition: '#/definitions/missing' } }] }, document),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unresolved-ref' &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].validate.definition',
    );
  });
});
