// issue-12 finding 5 at the policy level: each XML conversion refuses an amplifying document
// with the catalogued error of its origin (the consumer's request 400, a backend reply 502).
// The review after it: a document of many tiny nodes is refused before it is tokenised (the
// node bound), and a JSON list of many small items is written as text, never as a tree
// (test/soap/xml-conversion-memory.test.ts shows both in a gateway whose heap is capped).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { nestedAmplifier, rootAmplifier } from '../soap/amplifiers.ts';
import { apiInput, makeContext } from './helpers.ts';

function compileFlow(execute: unknown[]) {
  return compileAssembly({ execute }, apiInput({}), policyRegistry);
}

function requestContext(body: RawBody) {
  const message = {
    body,
    headers: { 'content-type': body.contentType ?? '' },
    status: { code: 200, reason: 'OK' },
  };
  const ctx = makeContext({ verb: 'POST', message });
  ctx.request.body = body;
  return ctx;
}

function replyContext(xml: string) {
  const reply = {
    status: { code: 200, reason: 'OK' },
    headers: {},
    body: new RawBody(Buffer.from(xml), 'text/xml'),
  };
  return makeContext({ vars: { reply } });
}

async function refusal(run: () => unknown): Promise<AssemblyError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof AssemblyError, String(error));
    return error;
  }
  assert.fail('the conversion should have been refused');
}

const tooManyAttributes = /element <r> has 300 attributes and namespace declarations, more than the limit of 128/;
const amplification = /would write more than \d+ characters \(16 per input byte, at least 1048576\): refused as an/;

describe('xml-to-json bound (issue-12 finding 5)', () => {
  for (const convention of ['badgerFish', 'apicv5']) {
    it(`answers 400 to an amplifying request body (${convention})`, async () => {
      const step = compileFlow([{ 'xml-to-json': { title: 'to json', 'conversion-type': convention } }]);
      const body = new RawBody(Buffer.from(nestedAmplifier(300, 20_000)), 'application/xml');
      const error = await refusal(() => step(requestContext(body)));
      assert.equal(error.status, 400);
      assert.equal(error.errorName, 'BadRequestError');
      assert.match(error.message, amplification);
    });
  }

  it('answers 502 naming the policy to an amplifying backend reply', async () => {
    const step = compileFlow([{ 'xml-to-json': { version: '2.0.0', title: 'to json', input: 'reply' } }]);
    const error = await refusal(() => step(replyContext(nestedAmplifier(300, 20_000))));
    assert.equal(error.status, 502);
    assert.equal(error.policy, 'to json');
    assert.match(error.message, /The backend response could not be read in policy to json: .*amplification/);
  });

  it('relaxedBadgerFish converts the same reply: its output stays near the input', async () => {
    const xml = nestedAmplifier(300, 20_000);
    const ctx = replyContext(xml);
    const policy = { 'conversion-type': 'relaxedBadgerFish', input: 'reply', output: 'converted' };
    await compileFlow([{ 'xml-to-json': policy }])(ctx);
    assert.ok(JSON.stringify(ctx.get('converted.body')).length < 2 * xml.length);
  });
});

describe('map XML input bound (issue-12 finding 5)', () => {
  const map = (variable: string) => ({
    map: {
      title: 'read',
      inputs: { input: { variable, content: 'application/xml' } },
      outputs: { output: { variable: 'message.body', content: 'application/json' } },
      actions: [{ set: 'output.value', from: 'input.r' }],
    },
  });

  it('answers 502 to a reply with more attributes on one element than the parser accepts', async () => {
    const error = await refusal(() => compileFlow([map('reply.body')])(replyContext(rootAmplifier(300, 10))));
    assert.equal(error.status, 502);
    assert.match(error.message, tooManyAttributes);
  });

  it('answers 400 to the same as a request body', async () => {
    const body = new RawBody(Buffer.from(rootAmplifier(300, 10)), 'application/xml');
    const error = await refusal(() => compileFlow([map('request.body')])(requestContext(body)));
    assert.equal(error.status, 400);
  });
});

describe('json-to-xml bound (issue-12 finding 5)', () => {
  const repeatedKey = JSON.stringify({
    r: { [`k${'x'.repeat(1000)}`]: Array.from({ length: 2000 }, () => 1) },
  });

  it('answers 400 to a request JSON whose long key repeats on every list item', async () => {
    const step = compileFlow([{ 'json-to-xml': { version: '2.0.0', title: 'to xml' } }]);
    const error = await refusal(() => step(requestContext(new RawBody(Buffer.from(repeatedKey), 'application/json'))));
    assert.equal(error.status, 400);
    assert.equal(error.policy, 'to xml');
    assert.match(error.message, amplification);
  });

  it('answers 500 TransformError when the flow built that JSON', async () => {
    const message = { body: JSON.parse(repeatedKey), headers: {}, status: { code: 200, reason: 'OK' } };
    const ctx = makeContext({ message });
    const error = await refusal(() => compileFlow([{ 'json-to-xml': { title: 'to xml' } }])(ctx));
    assert.equal(error.status, 500);
    assert.equal(error.errorName, 'TransformError');
    assert.match(error.message, amplification);
  });

  it('converts the same keys over a short list', async () => {
    const message = { body: { r: { k: [1, 2] } }, headers: {}, status: { code: 200, reason: 'OK' } };
    const ctx = makeContext({ message });
    await compileFlow([{ 'json-to-xml': {} }])(ctx);
    assert.equal(ctx.get('message.body'), '<r><k>1</k><k>2</k></r>');
  });
});

describe('the node bound of XML inputs (conversion memory review)', () => {
  /** 4 MB of empty elements, one node per 4 bytes; the bound is one per 8. */
  const flood = `<r>${'<a/>'.repeat(1_000_000)}</r>`;
  const nodes = /the 4000007-byte XML document has more than 500000 nodes \(one per 8 bytes, at least 65536\)/;

  it('xml-to-json answers 400 to a request of 4 MB of <a/>, before tokenising it', async () => {
    const step = compileFlow([{ 'xml-to-json': { version: '2.0.0', title: 'to json' } }]);
    const started = performance.now();
    const error = await refusal(() => step(requestContext(new RawBody(Buffer.from(flood), 'application/xml'))));
    const ms = performance.now() - started;
    assert.equal(error.status, 400);
    assert.equal(error.errorName, 'BadRequestError');
    assert.match(error.message, nodes);
    // Tokenising it took 1.6 s before; the scan takes tens of milliseconds (the bound is loose for a shared machine).
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
  });

  it('xml-to-json answers 502 naming the policy to a backend reply as dense', async () => {
    const step = compileFlow([{ 'xml-to-json': { version: '2.0.0', title: 'to json', input: 'reply' } }]);
    // 1 MB: the tests' backend limit.
    const error = await refusal(() => step(replyContext(`<r>${'<a/>'.repeat(250_000)}</r>`)));
    assert.equal(error.status, 502);
    assert.match(error.message, /^The backend response could not be read in policy to json: /);
    assert.match(error.message, /the 1000007-byte XML document has more than 125000 nodes/);
  });

  it('the map answers 400 to the same as an XML request input', async () => {
    const map = {
      map: {
        title: 'read',
        inputs: { input: { variable: 'request.body', content: 'application/xml' } },
        outputs: { output: { variable: 'message.body', content: 'application/json' } },
        actions: [{ set: 'output.value', from: 'input.r' }],
      },
    };
    const body = new RawBody(Buffer.from(flood), 'application/xml');
    const error = await refusal(() => compileFlow([map])(requestContext(body)));
    assert.equal(error.status, 400);
    assert.match(error.message, nodes);
  });

  it('converts a document as dense under the floor of 65536 nodes', async () => {
    const xml = `<r>${'<a/>'.repeat(65_000)}</r>`;
    const ctx = replyContext(xml);
    await compileFlow([{ 'xml-to-json': { input: 'reply', output: 'converted' } }])(ctx);
    const converted = ctx.get('converted.body') as { r: { a: unknown[] } };
    assert.equal(converted.r.a.length, 65_000);
  });
});

describe('json-to-xml of a long list of small items (conversion memory review)', () => {
  it('writes every item, with the exact text, and the element nesting of the tree it used to build', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const message = { body: { r: { a: items, b: { '@c': 'd', $: 'e' }, f: [] } }, headers: {} };
    const ctx = makeContext({ message: { ...message, status: { code: 200, reason: 'OK' } } });
    await compileFlow([{ 'json-to-xml': {} }])(ctx);
    const expected = `<r>${items.map((i) => `<a>${i}</a>`).join('')}<b c="d">e</b></r>`;
    assert.equal(ctx.get('message.body'), expected);
  });
});
