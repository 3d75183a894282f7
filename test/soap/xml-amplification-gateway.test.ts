// issue-12 finding 5 through a real gateway: the namespace amplification sent as a request body
// (400) and answered by a backend (502), with the gateway still answering another API.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startSoapPlatform } from './harness.ts';
import type { SoapPlatform } from './harness.ts';
import { nestedAmplifier, rootAmplifier } from './amplifiers.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const tooManyAttributes = /element <r> has 300 attributes and namespace declarations, more than the limit of 128/;

function heapMb(): number {
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

const replies: Record<string, string> = {
  '/root': rootAmplifier(300, 20_000),
  '/nested': nestedAmplifier(300, 20_000),
  '/large': nestedAmplifier(300, 154_000),
  '/ok': '<ok xmlns="urn:ok"><v>1</v></ok>',
};

function apiText(name: string, verb: 'get' | 'post', execute: string): string {
  return `swagger: '2.0'
info: { title: ${name}, x-ibm-name: ${name}, version: 1.0.0 }
basePath: /${name}
security: []
paths:
  /{case}:
    ${verb}:
      parameters: [{ name: case, in: path, required: true, type: string }]
      responses: { '200': { description: converted } }
x-ibm-configuration:
  assembly:
    execute:
${execute}
`;
}

describe('XML namespace amplification through the gateway (issue-12 finding 5)', () => {
  let platform: SoapPlatform;
  let backend: Server;
  let requestBase: string;
  let replyBase: string;
  let otherBase: string;
  let headers: Record<string, string>;

  before(async () => {
    backend = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(replies[req.url ?? ''] ?? replies['/ok']);
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    platform = await startSoapPlatform();
    const toJson = "      - xml-to-json: { version: 2.0.0, title: 'to json' }";
    const invoke = `      - invoke: { version: 2.0.0, title: call, target-url: '${url}/$(request.parameters.case)' }`;
    const request = await platform.publish({
      text: apiText('xmlrequest', 'post', toJson),
      file: 'xmlrequest.yaml',
    });
    const replyText = apiText('xmlreply', 'get', `${invoke}\n${toJson}`);
    const reply = await platform.publish({ text: replyText, file: 'xmlreply.yaml' });
    const other = await platform.publish({ text: apiText('xmlother', 'get', invoke), file: 'xmlother.yaml' });
    requestBase = request.base;
    replyBase = reply.base;
    otherBase = other.base;
    headers = { 'X-IBM-Client-Id': request.clientId };
  });

  after(async () => {
    await platform?.close();
    await new Promise<void>((resolve) => backend?.close(() => resolve()));
  });

  async function post(xml: string): Promise<{ status: number; body: Record<string, string>; ms: number }> {
    const started = performance.now();
    const init = { method: 'POST', headers: { ...headers, 'content-type': 'application/xml' }, body: xml };
    const response = await fetch(`${requestBase}/convert`, init);
    const body = (await response.json()) as Record<string, string>;
    return { status: response.status, body, ms: performance.now() - started };
  }

  /** The other API's latency, the fastest of three calls (the test machine is shared). */
  async function otherApiMs(): Promise<number> {
    let fastest = Infinity;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const response = await fetch(`${otherBase}/ok`, { headers });
      assert.equal(response.status, 200);
      await response.text();
      fastest = Math.min(fastest, performance.now() - started);
    }
    return fastest;
  }

  it('converts a small namespaced request body as before', async () => {
    const { status, body } = await post(replies['/ok']);
    assert.equal(status, 200);
    assert.deepEqual(body, { ok: { v: { $: '1', '@xmlns': { $: 'urn:ok' } }, '@xmlns': { $: 'urn:ok' } } });
  });

  it('answers 400 to the 87 KB reproduction as a request body, quickly', async () => {
    const { status, body, ms } = await post(replies['/root']);
    assert.equal(status, 400);
    assert.equal(body.httpCode, '400');
    assert.match(body.moreInformation, tooManyAttributes);
    assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
  });

  it('answers 400 naming the amplification when the 300 prefixes are spread over three elements', async () => {
    const { status, body } = await post(replies['/nested']);
    assert.equal(status, 400);
    assert.match(body.moreInformation, /^The request body could not be parsed: converting this \d+-byte document/);
    assert.match(body.moreInformation, /\(16 per input byte, at least 1048576\): refused as an amplification/);
    assert.match(body.moreInformation, /\(policy to json\)$/);
  });

  it('answers 502 to the amplification from a backend reply', async () => {
    for (const path of ['/root', '/nested']) {
      const response = await fetch(`${replyBase}${path}`, { headers });
      const body = (await response.json()) as Record<string, string>;
      assert.equal(response.status, 502, path);
      assert.match(body.moreInformation, /The backend response could not be read in policy to json: /);
    }
  });

  it('stays alive, heap bounded, through five 623 KB attacks each way, and still answers another API', async () => {
    const before = heapMb();
    for (let i = 0; i < 5; i++) {
      assert.equal((await post(replies['/large'])).status, 400);
      assert.equal((await fetch(`${replyBase}/large`, { headers })).status, 502);
    }
    const growth = heapMb() - before;
    assert.ok(growth < 50, `heap grew ${growth.toFixed(0)} MB`);
    const ms = await otherApiMs();
    assert.ok(ms < 100, `the other API answered in ${ms.toFixed(0)} ms`);
  });
});
