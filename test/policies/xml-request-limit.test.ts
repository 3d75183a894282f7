// The XML size cap at the policy level: the consumer's request XML is capped by the gateway's
// request limit (settings.maxRequestBytes, PORTICO_MAX_REQUEST_BYTES), and past it the policy
// answers the request limit's own 413; a backend reply keeps the backend limit.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const MiB = 1024 * 1024;
/** About `bytes` of XML: `<a>`s of 207 bytes each (few nodes: the time goes to the size, not the tree). */
const xml = (bytes: number) => `<r>${`<a>${'x'.repeat(200)}</a>`.repeat(Math.ceil(bytes / 207))}</r>`;

function compileFlow(execute: unknown[], settings: { maxRequestBytes: number; maxBackendBodyBytes: number }) {
  return compileAssembly({ execute }, apiInput({}, {}, settings), policyRegistry);
}

function requestContext(text: string) {
  const body = new RawBody(Buffer.from(text), 'application/xml');
  const message = { body, headers: { 'content-type': 'application/xml' }, status: { code: 200, reason: 'OK' } };
  const ctx = makeContext({ verb: 'POST', message });
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
  assert.fail('the XML should have been refused');
}

const toJson = { 'xml-to-json': { version: '2.0.0', title: 'to json' } };
const mapRead = {
  map: {
    title: 'read',
    inputs: { input: { variable: 'request.body', content: 'application/xml' } },
    outputs: { output: { variable: 'message.body', content: 'application/json' } },
    actions: [{ set: 'output.value', from: 'input.r' }],
  },
};

describe('request XML past the request limit', () => {
  const settings = { maxRequestBytes: MiB, maxBackendBodyBytes: 8 * MiB };
  for (const [name, policy] of [
    ['xml-to-json', toJson],
    ['map', mapRead],
  ] as const) {
    it(`${name} answers the request limit's 413, naming the policy`, async () => {
      const error = await refusal(() => compileFlow([policy], settings)(requestContext(xml(2 * MiB))));
      assert.equal(error.status, 413);
      assert.equal(error.reason, 'Payload Too Large');
      assert.equal(error.message, `The request body is larger than ${MiB} bytes`);
      assert.equal(error.policy, name === 'map' ? 'read' : 'to json');
    });
  }
  it('a 5 MiB request converts under a request limit of 8 MiB', async () => {
    const ctx = requestContext(xml(5 * MiB));
    await compileFlow([toJson], { maxRequestBytes: 8 * MiB, maxBackendBodyBytes: MiB })(ctx);
    assert.ok((ctx.get('message.body') as { r: { a: unknown[] } }).r.a.length > 25_000);
  });
  it('a backend reply keeps the backend limit, not the request limit', async () => {
    const reply = {
      status: { code: 200, reason: 'OK' },
      headers: {},
      body: new RawBody(Buffer.from(xml(2 * MiB)), 'text/xml'),
    };
    const ctx = makeContext({ vars: { reply } });
    await compileFlow([{ 'xml-to-json': { input: 'reply', output: 'converted' } }], settings)(ctx);
    assert.ok((ctx.get('converted.body') as { r: { a: unknown[] } }).r.a.length > 10_000);
    const tight = { maxRequestBytes: 8 * MiB, maxBackendBodyBytes: MiB };
    const error = await refusal(() =>
      compileFlow(
        [{ 'xml-to-json': { input: 'reply', output: 'converted' } }],
        tight,
      )(makeContext({ vars: { reply } })),
    );
    assert.equal(error.status, 502);
    assert.match(error.message, new RegExp(`more than the limit of ${MiB}`));
  });
});
