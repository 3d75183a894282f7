// xml-to-json / json-to-xml (BadgerFish) and the map policy's XML codec, on a real GatewayContext.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { apiInput, makeContext } from '../policies/helpers.ts';

function compileFlow(execute: unknown[], document: Record<string, unknown> = {}) {
  return compileAssembly({ execute }, apiInput(document), policyRegistry);
}

function xmlMessage(xml: string) {
  return {
    message: {
      body: new RawBody(Buffer.from(xml), 'application/xml'),
      headers: { 'content-type': 'application/xml' },
      status: { code: 200, reason: 'OK' },
    },
  };
}

describe('xml-to-json (BadgerFish)', () => {
  it('converts the BadgerFish example of IBM "XML to JSON": text in $, attributes as @name', async () => {
    const ctx = makeContext(xmlMessage('<a type="world">hello</a>'));
    await compileFlow([{ 'xml-to-json': { version: '2.0.0' } }])(ctx);
    assert.deepEqual(ctx.get('message.body'), { a: { $: 'hello', '@type': 'world' } });
    assert.equal(ctx.get('message.headers.content-type'), 'application/json');
  });

  it('repeats active namespaces in @xmlns on every element and lists repeated elements (badgerfish.ning.com)', async () => {
    const ctx = makeContext(
      xmlMessage(
        '<alice xmlns="http://some-namespace" xmlns:charlie="http://some-other-namespace"><bob>david</bob><charlie:edgar>frank</charlie:edgar><bob>x</bob></alice>',
      ),
    );
    await compileFlow([{ 'xml-to-json': {} }])(ctx);
    const ns = { $: 'http://some-namespace', charlie: 'http://some-other-namespace' };
    assert.deepEqual(ctx.get('message.body'), {
      alice: {
        bob: [
          { $: 'david', '@xmlns': ns },
          { $: 'x', '@xmlns': ns },
        ],
        'charlie:edgar': { $: 'frank', '@xmlns': ns },
        '@xmlns': ns,
      },
    });
  });

  it('relaxedBadgerFish gives plain strings for text-only elements', async () => {
    const ctx = makeContext(xmlMessage('<r><a>1</a><a>2</a><b c="d">e</b></r>'));
    await compileFlow([{ 'xml-to-json': { 'conversion-type': 'relaxedBadgerFish' } }])(ctx);
    assert.deepEqual(ctx.get('message.body'), { r: { a: ['1', '2'], b: { $: 'e', '@c': 'd' } } });
  });

  it('writes to another output message, leaving the input alone', async () => {
    const ctx = makeContext({
      vars: {
        reply: {
          status: { code: 200, reason: 'OK' },
          headers: {},
          body: new RawBody(Buffer.from('<a>1</a>'), 'text/xml'),
        },
      },
    });
    await compileFlow([{ 'xml-to-json': { input: 'reply', output: 'converted' } }])(ctx);
    assert.deepEqual(ctx.get('converted.body'), { a: { $: '1' } });
    assert.equal(ctx.get('reply.body'), '<a>1</a>');
  });
});

describe('json-to-xml (BadgerFish)', () => {
  it('round-trips BadgerFish with namespaces, declaring each namespace once', async () => {
    const ns = { $: 'http://some-namespace', charlie: 'http://some-other-namespace' };
    const ctx = makeContext({
      message: {
        body: {
          alice: {
            bob: { $: 'david', '@xmlns': ns },
            'charlie:edgar': { $: 'frank', '@xmlns': ns },
            '@xmlns': ns,
          },
        },
        headers: {},
        status: { code: 200, reason: 'OK' },
      },
    });
    await compileFlow([{ 'json-to-xml': { version: '2.0.0' } }])(ctx);
    assert.equal(
      ctx.get('message.body'),
      '<alice xmlns="http://some-namespace" xmlns:charlie="http://some-other-namespace"><bob>david</bob><charlie:edgar>frank</charlie:edgar></alice>',
    );
    assert.equal(ctx.get('message.headers.content-type'), 'application/xml');
  });

  it('converts plain JSON ({"a": "hello"} → <a>hello</a>, IBM note) and wraps several top-level keys in root-element-name', async () => {
    const one = makeContext({
      message: {
        body: new RawBody(Buffer.from('{"a":"hello"}'), 'application/json'),
        headers: {},
        status: { code: 200, reason: 'OK' },
      },
    });
    await compileFlow([{ 'json-to-xml': {} }])(one);
    assert.equal(one.get('message.body'), '<a>hello</a>');
    const many = makeContext({
      message: {
        body: { a: 1, b: [true, false], '@id': 'x<y' },
        headers: {},
        status: { code: 200, reason: 'OK' },
      },
    });
    await compileFlow([{ 'json-to-xml': { 'root-element-name': 'doc' } }])(many);
    assert.equal(many.get('message.body'), '<doc id="x&lt;y"><a>1</a><b>true</b><b>false</b></doc>');
  });

  it('raises TransformError for a key that cannot be an XML name', async () => {
    const ctx = makeContext({
      message: { body: { 'not a name': 1 }, headers: {}, status: { code: 200, reason: 'OK' } },
    });
    await assert.rejects(
      async () => compileFlow([{ 'json-to-xml': { title: 'to xml' } }])(ctx),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'TransformError' && error.policy === 'to xml',
    );
  });
});

describe('map policy XML codec', () => {
  const document = {
    definitions: {
      order: {
        type: 'object',
        xml: { prefix: 'o', namespace: 'urn:o' },
        properties: {
          id: { type: 'string', xml: { attribute: true } },
          line: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } } } },
          note: { type: 'string', xml: { name: 'Note', namespace: 'urn:n', prefix: 'n' } },
        },
      },
      doc: { type: 'object', properties: { order: { $ref: '#/definitions/order' } } },
    },
  };

  it('builds XML from the schema: attributes, lists, renamed elements, inherited namespace', async () => {
    const step = compileFlow(
      [
        {
          map: {
            inputs: { in: { variable: 'request.parameters' } },
            outputs: {
              body: {
                schema: { $ref: '#/definitions/doc' },
                variable: 'message.body',
                content: 'application/xml',
              },
            },
            actions: [
              { set: 'body.order.note', value: '"a & b"' },
              { set: 'body.order.id', from: 'in.id' },
              { create: 'body.order.line', foreach: 'in.lines', actions: [{ set: 'qty', from: 'q' }] },
            ],
          },
        },
      ],
      document,
    );
    const ctx = makeContext({ parameters: { id: '7', lines: [{ q: 2 }, { q: 3 }] } });
    await step(ctx);
    assert.equal(
      ctx.get('message.body'),
      '<o:order xmlns:o="urn:o" id="7"><o:line><o:qty>2</o:qty></o:line><o:line><o:qty>3</o:qty></o:line><n:Note xmlns:n="urn:n">a &amp; b</n:Note></o:order>',
    );
  });

  it('reads XML typed by the schema: lists stay lists, numbers are numbers, declared attributes by name', async () => {
    const step = compileFlow(
      [
        {
          map: {
            inputs: {
              input: {
                schema: { $ref: '#/definitions/doc' },
                variable: 'reply.body',
                content: 'application/xml',
              },
            },
            outputs: { out: { variable: 'message.body' } },
            actions: [{ set: 'out', from: 'input.order' }],
          },
        },
      ],
      document,
    );
    const ctx = makeContext({
      vars: {
        reply: {
          status: { code: 200, reason: 'OK' },
          headers: {},
          body: new RawBody(
            Buffer.from(
              '<x:order xmlns:x="urn:o" id="9" extra="e"><x:line><x:qty>4</x:qty></x:line><Note>hi</Note></x:order>',
            ),
            'text/xml',
          ),
        },
      },
    });
    await step(ctx);
    assert.deepEqual(ctx.get('message.body'), { id: '9', '@extra': 'e', line: [{ qty: 4 }], note: 'hi' });
  });

  it('raises SOAPError for a Fault answered with HTTP 200', async () => {
    const step = compileFlow([
      {
        map: {
          title: 'out map',
          inputs: { input: { variable: 'reply.body', content: 'application/xml' } },
          outputs: { out: { variable: 'message.body' } },
          actions: [{ set: 'out.x', from: 'input.Envelope.Body.r' }],
        },
      },
    ]);
    const fault =
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Server</faultcode><faultstring>boom &amp; bust</faultstring></s:Fault></s:Body></s:Envelope>';
    const ctx = makeContext({
      vars: {
        reply: {
          status: { code: 200, reason: 'OK' },
          headers: {},
          body: new RawBody(Buffer.from(fault), 'text/xml'),
        },
      },
    });
    await assert.rejects(
      async () => step(ctx),
      (error: unknown) =>
        error instanceof AssemblyError && error.errorName === 'SOAPError' && error.message === 'boom & bust',
    );
  });
});
