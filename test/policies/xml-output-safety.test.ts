// The XML writers refuse what the consumer's JSON must not do to them: markup smuggled in through
// @xmlns prefixes (json-to-xml), output amplified far past the input (the map's XML outputs), and
// the map blaming the backend for the consumer's own XML when message.body still holds it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { XmlWriter } from '../../src/soap/xml-serialize.ts';
import { parseXml, XmlError } from '../../src/soap/xml.ts';
import { apiInput, makeContext } from './helpers.ts';

function compileFlow(execute: unknown[]) {
  return compileAssembly({ execute }, apiInput({}), policyRegistry);
}

/** A context whose message.body is the consumer's request body, as request-context.ts builds it. */
function requestContext(text: string, contentType: string) {
  const body = new RawBody(Buffer.from(text), contentType);
  const ctx = makeContext({ verb: 'POST', message: { body, headers: { 'content-type': contentType } } });
  ctx.request.body = body;
  return ctx;
}

async function refusal(run: () => unknown): Promise<AssemblyError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof AssemblyError, String(error));
    return error;
  }
  assert.fail('the policy should have refused');
}

const amplification = /would write more than \d+ characters .*refused as an amplification/;

describe('json-to-xml: @xmlns keys are namespace prefixes, never markup', () => {
  const step = compileFlow([{ 'json-to-xml': { version: '2.0.0', title: 'to xml' } }]);
  const injections: Record<string, unknown> = {
    attribute: { order: { '@xmlns': { 'x="urn:x" role="admin" z': 'urn:z' }, item: 'book' } },
    element: { order: { wrap: { '@xmlns': { 'x="a"><role>admin</role></wrap><wrap x': 'u' } }, item: 'book' } },
    doctype: { order: { '@xmlns': { 'x="u"?><!DOCTYPE d [<!ENTITY e "x">]><y z': 'u' }, item: 'book' } },
    'the xmlns prefix': { order: { '@xmlns': { xmlns: 'urn:x' } } },
    'xml bound elsewhere': { order: { '@xmlns': { xml: 'urn:x' } } },
    'an empty key': { order: { '@xmlns': { '': 'urn:x' } } },
    'a qualified key': { order: { '@xmlns': { 'a:b': 'urn:x' } } },
    'a prefix bound to no namespace': { order: { '@xmlns': { p: '' } } },
  };
  for (const [name, json] of Object.entries(injections)) {
    it(`answers the consumer 400 for ${name}`, async () => {
      const ctx = requestContext(JSON.stringify(json), 'application/json');
      const error = await refusal(() => step(ctx));
      assert.equal(error.status, 400);
      assert.equal(error.errorName, 'BadRequestError');
      assert.equal(error.policy, 'to xml');
      assert.match(error.message, /namespace/);
    });
  }

  it('answers 500 when the flow built that JSON', async () => {
    const body = { order: { '@xmlns': { 'x="urn:x" role="admin" z': 'urn:z' }, item: 'book' } };
    const ctx = makeContext({ message: { body, headers: {}, status: { code: 200, reason: 'OK' } } });
    const error = await refusal(() => step(ctx));
    assert.equal(error.status, 500);
    assert.equal(error.errorName, 'TransformError');
  });

  it('still writes the default namespace, prefixes, xml itself, and escapes the URIs', async () => {
    const json = {
      'p:order': {
        '@xmlns': { $: 'urn:d?a="1"&b=<2>', p: 'urn:p', xml: 'http://www.w3.org/XML/1998/namespace' },
        item: 'book',
      },
    };
    const ctx = requestContext(JSON.stringify(json), 'application/json');
    await step(ctx);
    const xml = ctx.get('message.body') as string;
    assert.equal(
      xml,
      '<p:order xmlns="urn:d?a=&quot;1&quot;&amp;b=&lt;2&gt;" xmlns:p="urn:p"><item>book</item></p:order>',
    );
    const root = parseXml(xml);
    assert.deepEqual(root.attributes, []);
    assert.equal(root.namespace, 'urn:p');
  });

  it('the serialiser itself refuses a declaration whose prefix is not an NCName', () => {
    for (const prefix of ['x="1" y', 'a:b', 'xmlns', 'a b', '1a']) {
      assert.throws(() => new XmlWriter().start('r', { [prefix]: 'urn:u' }, []), XmlError, prefix);
    }
    const writer = new XmlWriter();
    writer.start('r', { '': 'urn:d', p: 'urn:p' }, []);
    writer.end('r');
    assert.equal(writer.toString(), '<r xmlns="urn:d" xmlns:p="urn:p"/>');
  });
});

describe('map XML output: bounded by its inputs, as json-to-xml', () => {
  const map = (input: string) => ({
    map: {
      version: '2.0.0',
      title: 'to xml',
      inputs: { input: { variable: input, content: 'application/json' } },
      outputs: { out: { variable: 'message.body', content: 'application/xml' } },
      actions: [{ set: 'out.order', from: 'input.order' }],
    },
  });
  // ~6 KB of JSON whose 1000-character key is written twice per item: 4 MB of XML.
  const repeatedKey = JSON.stringify({ order: { [`k${'x'.repeat(1000)}`]: Array.from({ length: 2000 }, () => 0) } });

  it('answers 400 to a request whose long key repeats on every list item, without writing it', async () => {
    const ctx = requestContext(repeatedKey, 'application/json');
    const started = performance.now();
    const error = await refusal(() => compileFlow([map('request.body')])(ctx));
    assert.ok(performance.now() - started < 2000, 'refused before writing megabytes');
    assert.equal(error.status, 400);
    assert.equal(error.errorName, 'BadRequestError');
    assert.equal(error.policy, 'to xml');
    assert.match(error.message, amplification);
  });

  it('answers 400 too when the input is message.body still holding the request', async () => {
    const ctx = requestContext(repeatedKey, 'application/json');
    const error = await refusal(() => compileFlow([map('message.body')])(ctx));
    assert.equal(error.status, 400);
    assert.match(error.message, amplification);
  });

  // Whose data it is follows the variable's parsed path, not its text (Session 15 review).
  it('answers 400 whatever spelling names the request: request[\'body\'], request["body"]', async () => {
    for (const variable of ["request['body']", 'request["body"]']) {
      const ctx = requestContext(repeatedKey, 'application/json');
      const error = await refusal(() => compileFlow([map(variable)])(ctx));
      assert.equal(error.status, 400, variable);
      assert.match(error.message, amplification);
    }
  });

  it('answers 500 TransformError when the data is not the consumer’s', async () => {
    const ctx = makeContext({ vars: { built: JSON.parse(repeatedKey) } });
    const error = await refusal(() => compileFlow([map('built')])(ctx));
    assert.equal(error.status, 500);
    assert.equal(error.errorName, 'TransformError');
    assert.match(error.message, amplification);
  });

  it('writes the same keys over a short list', async () => {
    const ctx = requestContext(JSON.stringify({ order: { k: [1, 2] } }), 'application/json');
    await compileFlow([map('request.body')])(ctx);
    assert.equal(ctx.get('message.body'), '<order><k>1</k><k>2</k></order>');
  });

  it('writes a list too long to spread into one call (map and json-to-xml)', async () => {
    const json = JSON.stringify({ order: { k: Array.from({ length: 200_000 }, () => 0) } });
    const mapped = requestContext(json, 'application/json');
    await compileFlow([map('request.body')])(mapped);
    assert.equal((mapped.get('message.body') as string).length, '<order></order>'.length + 200_000 * 8);
    const converted = requestContext(json, 'application/json');
    await compileFlow([{ 'json-to-xml': { version: '2.0.0' } }])(converted);
    assert.equal(converted.get('message.body'), mapped.get('message.body'));
  });
});

describe('map XML input: message.body holding the request is the consumer’s', () => {
  const map = {
    map: {
      version: '2.0.0',
      title: 'read',
      inputs: { input: { variable: 'message.body', content: 'application/xml' } },
      outputs: { out: { variable: 'message.body' } },
      actions: [{ set: 'out', from: 'input' }],
    },
  };

  it('answers 400 BadRequestError to malformed request XML, not 502', async () => {
    const error = await refusal(() => compileFlow([map])(requestContext('<a><b></a>', 'application/xml')));
    assert.equal(error.status, 400);
    assert.equal(error.errorName, 'BadRequestError');
    assert.equal(error.policy, 'read');
  });

  it('reads it within the request limit, not the (here 1 MiB) backend limit', async () => {
    const xml = `<a>${`<b>${'1'.repeat(200)}</b>`.repeat(7_000)}</a>`;
    assert.ok(xml.length > 1 << 20);
    const ctx = requestContext(xml, 'application/xml');
    await compileFlow([map])(ctx);
    assert.equal((ctx.get('message.body.a.b') as unknown[]).length, 7_000);
  });

  it('still blames the backend for malformed XML it sent into message.body', async () => {
    const ctx = requestContext('<ok/>', 'application/xml');
    ctx.set('message.body', new RawBody(Buffer.from('<a><b></a>'), 'application/xml'));
    const error = await refusal(() => compileFlow([map])(ctx));
    assert.equal(error.status, 502);
    assert.equal(error.errorName, 'TransformError');
  });
});
