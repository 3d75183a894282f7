import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

function raw(text: string, type = 'application/json'): RawBody {
  return new RawBody(Buffer.from(text), type);
}

describe('parse policy', () => {
  it('parses a raw JSON body into a value', async () => {
    const ctx = makeContext({ message: { body: raw('{"zip":"90210"}') } });
    await compile({ execute: [{ parse: { version: '2.0.0' } }] })(ctx);
    assert.deepEqual(ctx.get('message.body'), { zip: '90210' });
  });

  it('raises ParseError 400 on a body that is not JSON', async () => {
    const ctx = makeContext({ message: { body: raw('{"zip":') } });
    await assert.rejects(
      async () => compile({ execute: [{ parse: {} }] })(ctx),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'ParseError' && error.status === 400,
    );
  });

  it('raises ParseError on XML that is not well-formed', async () => {
    const ctx = makeContext({ message: { body: raw('<a><b></a>', 'application/xml') } });
    await assert.rejects(
      async () => compile({ execute: [{ parse: { 'use-content-type': true } }] })(ctx),
      (error: unknown) => error instanceof AssemblyError && error.errorName === 'ParseError',
    );
  });

  it('parses another message variable into an output variable', async () => {
    const ctx = makeContext({ vars: { vendor: { headers: {}, body: raw('[1,2]', 'text/plain') } } });
    await compile({ execute: [{ parse: { input: 'vendor', output: 'parsed' } }] })(ctx);
    assert.deepEqual(ctx.get('parsed.body'), [1, 2]);
  });
});
