import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, PolicyCompileError, RawBody } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

const rates = {
  type: 'object',
  properties: { next_day: { type: 'string' }, two_day: { type: 'string' }, ground: { type: 'string' } },
};
const shippingRsp = {
  type: 'object',
  properties: { company: { type: 'string' }, rates },
  required: ['company', 'rates'],
};
const logistics = {
  definitions: {
    rates,
    shipping: {
      type: 'object',
      properties: { xyz: { $ref: '#/definitions/rates' }, cek: { $ref: '#/definitions/rates' } },
    },
    xyz_shipping_rsp: shippingRsp,
    cek_shipping_rsp: shippingRsp,
    paymentAmount: { properties: { paymentAmount: { type: 'number', format: 'float' } } },
  },
};

const logisticsMap = {
  version: '2.0.0',
  title: 'map',
  inputs: {
    xyz: {
      schema: { $ref: '#/definitions/xyz_shipping_rsp' },
      variable: 'xyz_response.body',
      content: 'application/json',
    },
    cek: {
      schema: { $ref: '#/definitions/cek_shipping_rsp' },
      variable: 'cek_response.body',
      content: 'application/json',
    },
  },
  outputs: {
    output: {
      schema: { $ref: '#/definitions/shipping' },
      variable: 'message.body',
      content: 'application/json',
    },
  },
  actions: [
    { set: 'output.xyz.next_day', from: 'xyz.rates.next_day' },
    { set: 'output.xyz.two_day', from: 'xyz.rates.two_day' },
    { set: 'output.xyz.ground', from: 'xyz.rates.ground' },
    { set: 'output.cek.next_day', from: 'cek.rates.next_day' },
    { set: 'output.cek.two_day', from: 'cek.rates.two_day' },
    { set: 'output.cek.ground', from: 'cek.rates.ground' },
  ],
};

// The vendor replies for zip 90210, as the shipping stub computes them (notes §3).
function vendorBody(company: string, next: string, two: string, ground: string): RawBody {
  return new RawBody(
    Buffer.from(JSON.stringify({ company, rates: { next_day: next, two_day: two, ground } })),
    'application/json',
  );
}

describe('map policy', () => {
  it('merges the two vendor replies of the logistics API into the shipping response', async () => {
    const step = compile({ execute: [{ map: logisticsMap }] }, logistics);
    const ctx = makeContext({
      vars: {
        xyz_response: {
          headers: {},
          status: { code: 200, reason: 'OK' },
          body: vendorBody('xyz', '37.71', '25.80', '19.85'),
        },
        cek_response: {
          headers: {},
          status: { code: 200, reason: 'OK' },
          body: vendorBody('cek', '34.28', '23.45', '18.04'),
        },
      },
    });
    await step(ctx);
    assert.equal(
      JSON.stringify(ctx.get('message.body')),
      '{"xyz":{"next_day":"37.71","two_day":"25.80","ground":"19.85"},"cek":{"next_day":"34.28","two_day":"23.45","ground":"18.04"}}',
    );
  });

  it('converts a string to the number its output schema declares (SOAP 299.71)', async () => {
    const step = compile(
      {
        execute: [
          {
            map: {
              inputs: { input: { variable: 'financingOut.body', content: 'application/xml' } },
              outputs: {
                output: {
                  schema: { $ref: '#/definitions/paymentAmount' },
                  variable: 'message.body',
                  content: 'application/json',
                },
              },
              actions: [{ set: 'output.paymentAmount', from: 'input.Envelope.Body.financingResult.paymentAmount' }],
            },
          },
        ],
      },
      logistics,
    );
    const ctx = makeContext({
      vars: { 'financingOut.body': { Envelope: { Body: { financingResult: { paymentAmount: '299.71' } } } } },
    });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), { paymentAmount: 299.71 });
  });

  it('writes defaults to header outputs when an action has no source (financing input map)', async () => {
    const step = compile({
      execute: [
        {
          map: {
            inputs: { amount: { schema: { type: 'float' }, variable: 'request.parameters.amount' } },
            outputs: {
              'content-type': { schema: { type: 'string' }, variable: 'message.headers.content-type' },
              body: {
                schema: { type: 'object', properties: { amount: { type: 'string' } } },
                variable: 'message.body',
                content: 'application/xml',
              },
            },
            actions: [
              { set: 'content-type', default: 'text/xml' },
              { set: 'body.amount', from: 'amount' },
            ],
          },
        },
      ],
    });
    const ctx = makeContext({ parameters: { amount: 10000 } });
    await step(ctx);
    assert.equal(ctx.get('message.headers.Content-Type'), 'text/xml');
    // The XML codec serialises the built tree (the body schema has no xml namespace: no prefix).
    assert.equal(ctx.get('message.body'), '<amount>10000</amount>');
  });

  it('uses default when the from source is missing and skips the field without one', async () => {
    const step = compile({
      execute: [
        {
          map: {
            inputs: { in: { variable: 'missing_response.body' } },
            outputs: { out: { variable: 'message.body' } },
            actions: [
              { set: 'out.a', from: 'in.a', default: 'none' },
              { set: 'out.b', from: 'in.b' },
            ],
          },
        },
      ],
    });
    const ctx = makeContext();
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), { a: 'none' });
  });

  it('maps a list with foreach and nested actions relative to each item', async () => {
    const step = compile({
      execute: [
        {
          map: {
            inputs: { src: { variable: 'orders_response.body' } },
            outputs: {
              out: {
                variable: 'message.body',
                schema: {
                  type: 'object',
                  properties: {
                    items: {
                      type: 'array',
                      items: { type: 'object', properties: { qty: { type: 'integer' } } },
                    },
                  },
                },
              },
            },
            actions: [
              {
                create: 'out.items',
                foreach: 'src.lines',
                actions: [
                  { set: 'sku', from: 'id' },
                  { set: 'qty', from: 'count' },
                ],
              },
            ],
          },
        },
      ],
    });
    const ctx = makeContext({
      vars: {
        'orders_response.body': {
          lines: [
            { id: 'a', count: '2' },
            { id: 'b', count: '5' },
          ],
        },
      },
    });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), {
      items: [
        { sku: 'a', qty: 2 },
        { sku: 'b', qty: 5 },
      ],
    });
  });

  it('concatenates a from list, or passes it to a JSONata value as $', async () => {
    const step = compile({
      execute: [
        {
          map: {
            inputs: { p: { variable: 'person' } },
            outputs: { out: { variable: 'message.body' } },
            actions: [
              { set: 'out.joined', from: ['p.first', 'p.last'] },
              { set: 'out.full', from: ['p.first', 'p.last'], value: "$[0] & ' ' & $[1]" },
              { set: 'out.upper', from: 'p.last', value: '$uppercase($)' },
            ],
          },
        },
      ],
    });
    const ctx = makeContext({ vars: { person: { first: 'Ada', last: 'Lovelace' } } });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), {
      joined: 'AdaLovelace',
      full: 'Ada Lovelace',
      upper: 'LOVELACE',
    });
  });

  it('raises TransformError when a value cannot take its declared type', async () => {
    const step = compile(
      {
        execute: [
          {
            map: {
              title: 'to-number',
              inputs: { in: { variable: 'src' } },
              outputs: { out: { variable: 'message.body', schema: { $ref: '#/definitions/paymentAmount' } } },
              actions: [{ set: 'out.paymentAmount', from: 'in.v' }],
            },
          },
        ],
      },
      logistics,
    );
    const ctx = makeContext({ vars: { src: { v: 'abc' } } });
    await assert.rejects(
      async () => step(ctx),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'TransformError' && error.policy === 'to-number',
    );
  });

  it('names the action path when a set target is not an output', () => {
    const bad = {
      ...logisticsMap,
      actions: [...logisticsMap.actions.slice(0, 2), { set: 'result.xyz', from: 'xyz.rates.ground' }],
    };
    assert.throws(
      () => compile({ execute: [{ map: bad }] }, logistics),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unknown-output' &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].map.actions[2].set',
    );
  });

  it('refuses an unresolved $ref with rule unresolved-ref', () => {
    const bad = {
      ...logisticsMap,
      outputs: { output: { schema: { $ref: '#/definitions/nope' }, variable: 'message.body' } },
    };
    assert.throws(
      () => compile({ execute: [{ map: bad }] }, logistics),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'unresolved-ref',
    );
  });

  it('resolves a $ref into x-ibm-configuration targets', async () => {
    const document = {
      'x-ibm-configuration': {
        targets: {
          financingService: {
            definitions: { financingOutput: { type: 'object', properties: { amount: { type: 'integer' } } } },
          },
        },
      },
    };
    const step = compile(
      {
        execute: [
          {
            map: {
              inputs: { in: { variable: 'src' } },
              outputs: {
                out: {
                  variable: 'message.body',
                  schema: {
                    $ref: '#/x-ibm-configuration/targets/financingService/definitions/financingOutput',
                  },
                },
              },
              actions: [{ set: 'out.amount', from: 'in.a' }],
            },
          },
        ],
      },
      document,
    );
    const ctx = makeContext({ vars: { src: { a: '36' } } });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), { amount: 36 });
  });

  it('refuses an input named like its context variable', () => {
    assert.throws(
      () => compile({ execute: [{ map: { inputs: { message: { variable: 'message.body' } }, actions: [] } }] }),
      (error: unknown) => error instanceof PolicyCompileError && error.rule === 'input-name-is-variable',
    );
  });

  it('refuses a from path that does not start with an input name', () => {
    assert.throws(
      () =>
        compile({
          execute: [
            {
              map: {
                inputs: { a: { variable: 'x' } },
                outputs: { o: { variable: 'message.body' } },
                actions: [{ set: 'o.v', from: 'b.v' }],
              },
            },
          ],
        }),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unknown-input' &&
        error.path.endsWith('.map.actions[0].from'),
    );
  });

  it('refuses a value that is not valid JSONata at compile time', () => {
    assert.throws(
      () =>
        compile({
          execute: [
            {
              map: {
                inputs: { a: { variable: 'x' } },
                outputs: { o: { variable: 'message.body' } },
                actions: [{ set: 'o.v', from: 'a.v', value: '$foo(' }],
              },
            },
          ],
        }),
      (error: unknown) => error instanceof PolicyCompileError && error.path.endsWith('.actions[0].value'),
    );
  });
});
