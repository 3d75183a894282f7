// Fixture-driven SOAP tests: each test/fixtures/soap/<Service>__<behaviour>/ folder holds a WSDL
// (and imported XSDs), request.json ({operation, body}), expected-request.xml, reply.xml and
// expected.json ({status, body}); optionally expected-headers.json. The WSDL is imported through
// Services.importApi (the real import path), published, and called through the real gateway;
// a local backend checks the SOAP request it receives and answers reply.xml.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import AdmZip from 'adm-zip';
import { mainWsdlOf, readWsdlZip } from '../../src/soap/wsdl-files.ts';
import { canonicalXml } from './canonical-xml.ts';
import { startSoapPlatform } from './harness.ts';
import type { SoapPlatform } from './harness.ts';
import { startRecorder } from './recorder.ts';
import type { Recorder } from './recorder.ts';

const root = fileURLToPath(new URL('../fixtures/soap/', import.meta.url));

function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) visit(full);
      else if (/\.(wsdl|xsd)$/.test(name)) out[relative(dir, full).split(sep).join('/')] = readFileSync(full, 'utf8');
    }
  };
  visit(dir);
  return out;
}

function zipOf(files: Record<string, string>): Buffer {
  const zip = new AdmZip();
  for (const [name, text] of Object.entries(files)) zip.addFile(`bundle/${name}`, Buffer.from(text, 'utf8'));
  return zip.toBuffer();
}

interface Fixture {
  name: string;
  files: Record<string, string>;
  request: { operation: string; body: unknown };
  expectedRequest: string;
  reply: string;
  expected: { status: number; body: unknown };
  expectedHeaders: Record<string, string> | undefined;
}

function load(name: string): Fixture {
  const dir = join(root, name);
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  const has = (file: string): boolean => readdirSync(dir).includes(file);
  return {
    name,
    files: filesOf(dir),
    request: JSON.parse(read('request.json')) as Fixture['request'],
    expectedRequest: read('expected-request.xml'),
    reply: read('reply.xml'),
    expected: JSON.parse(read('expected.json')) as Fixture['expected'],
    expectedHeaders: has('expected-headers.json')
      ? (JSON.parse(read('expected-headers.json')) as Record<string, string>)
      : undefined,
  };
}

const fixtures = readdirSync(root)
  .filter((name) => name.includes('__'))
  .sort()
  .map(load);

async function runFixture(fixture: Fixture, via: 'folder' | 'zip'): Promise<void> {
  const isFault = /<(?:[\w.-]+:)?Fault[\s>]/.test(fixture.reply);
  let recorder: Recorder | undefined;
  let platform: SoapPlatform | undefined;
  try {
    recorder = await startRecorder({
      answer: () => ({
        status: isFault ? 500 : 200,
        contentType: 'text/xml; charset=utf-8',
        body: fixture.reply,
      }),
    });
    const files = Object.fromEntries(
      Object.entries(fixture.files).map(([name, text]) => [
        name,
        text.replaceAll('http://127.0.0.1:9999', recorder!.url),
      ]),
    );
    let main: string;
    let all = files;
    if (via === 'zip') {
      all = readWsdlZip(zipOf(files), `${fixture.name}.zip`);
      main = mainWsdlOf(all, `${fixture.name}.zip`);
    } else {
      main = mainWsdlOf(files, fixture.name);
    }
    const { [main]: text, ...attachments } = all;
    platform = await startSoapPlatform();
    const { base, clientId } = await platform.publish({ text, file: main, attachments });
    const response = await fetch(`${base}/${fixture.request.operation}`, {
      method: 'POST',
      headers: { 'X-IBM-Client-Id': clientId, 'content-type': 'application/json' },
      body: JSON.stringify(fixture.request.body),
    });
    const body = (await response.json()) as unknown;
    assert.equal(recorder.requests.length, 1, 'one backend call');
    const sent = recorder.requests[0];
    assert.equal(sent.method, 'POST');
    assert.equal(canonicalXml(sent.body), canonicalXml(fixture.expectedRequest), `SOAP request sent:\n${sent.body}`);
    for (const [name, value] of Object.entries(fixture.expectedHeaders ?? {}))
      assert.equal(sent.headers[name], value, `header ${name}`);
    assert.equal(response.status, fixture.expected.status, JSON.stringify(body));
    assert.deepEqual(body, fixture.expected.body);
  } finally {
    await platform?.close();
    await recorder?.close();
  }
}

describe('SOAP fixtures through the real gateway', () => {
  before(() => assert.ok(fixtures.length >= 7, 'fixture folders found'));
  after(() => undefined);
  for (const fixture of fixtures) {
    it(`${fixture.name}: imports the WSDL, sends expected-request.xml, answers expected.json`, () =>
      runFixture(fixture, 'folder'));
  }
  for (const fixture of fixtures.filter((candidate) => candidate.name.includes('imported-xsd'))) {
    it(`${fixture.name}: the same from a zip of the WSDL and its XSDs`, () => runFixture(fixture, 'zip'));
  }
});
