// Security review finding: an XML conversion's heap was charged by its characters only, and a
// tree costs far more per element, so 4 MB of {"a":[1,1,…]} took 1.3 GB through json-to-xml or
// a map writing XML, and 4 MB of <a/> about 370 MB through xml-to-json; a few at once crashed
// the gateway for every tenant. Here a real gateway runs in a process whose heap is capped at
// 256 MB: several such requests at once are answered (converted, or refused with the catalogued
// 400), the process stays up and another API still answers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const fixture = fileURLToPath(new URL('../fixtures/processes/conversion-gateway.ts', import.meta.url));
const HEAP_MB = 256;

/** 2,000,000 one-digit items: 4 MB of JSON, 16 MB of XML. */
const jsonList = `{"a":[${Array(2_000_000).fill('1').join(',')}]}`;
/** 1,000,000 empty elements: 4 MB of XML, one node per 4 bytes. */
const xmlFlood = `<r>${'<a/>'.repeat(1_000_000)}</r>`;

interface Gateway {
  bases: Record<string, string>;
  clientId: string;
}

function startGateway(child: ChildProcess): Promise<Gateway> {
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway did not start:\n${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((text) => text.startsWith('{"bases"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Gateway);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${code ?? signal}):\n${output}`));
    });
  });
}

describe('XML conversions in a gateway with a 256 MB heap (conversion memory bound)', () => {
  let child: ChildProcess;
  let gateway: Gateway;
  let stderr = '';

  before(async () => {
    child = spawn(process.execPath, [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', fixture], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    gateway = await startGateway(child);
  });

  after(() => {
    child?.kill();
  });

  async function post(api: string, body: string, contentType: string): Promise<{ status: number; text: string }> {
    const response = await fetch(`${gateway.bases[api]}/case`, {
      method: 'POST',
      headers: { 'X-IBM-Client-Id': gateway.clientId, 'content-type': contentType },
      body,
    });
    return { status: response.status, text: await response.text() };
  }

  it('answers ten 4 MB conversions sent at once, and stays up for another API', async () => {
    const calls = [
      ...Array.from({ length: 3 }, () => post('toxml', jsonList, 'application/json')),
      ...Array.from({ length: 2 }, () => post('mapxml', jsonList, 'application/json')),
      ...Array.from({ length: 3 }, () => post('tojson', xmlFlood, 'application/xml')),
      ...Array.from({ length: 2 }, () => post('mapread', xmlFlood, 'application/xml')),
    ];
    const answers = await Promise.allSettled(calls);
    const failed = answers.filter((answer) => answer.status === 'rejected');
    assert.deepEqual(failed, [], `requests failed; the gateway wrote:\n${stderr.slice(-2000)}`);
    const [toXml, mapXml, toJson, mapRead] = [
      answers.slice(0, 3),
      answers.slice(3, 5),
      answers.slice(5, 8),
      answers.slice(8),
    ].map((group) => group.map((answer) => (answer as PromiseFulfilledResult<{ status: number; text: string }>).value));
    for (const { status, text } of toXml) {
      assert.equal(status, 200);
      assert.equal(text.length, '<json></json>'.length + 2_000_000 * '<a>1</a>'.length);
    }
    for (const { status, text } of mapXml) {
      assert.equal(status, 200);
      assert.equal(text.length, '<r></r>'.length + 2_000_000 * '<a>1</a>'.length);
    }
    for (const { status, text } of [...toJson, ...mapRead]) {
      assert.equal(status, 400);
      const body = JSON.parse(text) as Record<string, string>;
      assert.equal(body.httpCode, '400');
      assert.match(body.moreInformation, /^The request body could not be parsed: the 4000007-byte XML document has/);
      assert.match(body.moreInformation, /more than 500000 nodes \(one per 8 bytes, at least 65536\)/);
    }
    assert.equal(child.exitCode, null);
    const plain = await post('plain', '{}', 'application/json');
    assert.deepEqual(plain, { status: 200, text: 'ok' });
  });
});
