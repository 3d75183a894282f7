// XXE and entity expansion against every XML entry point: the safe parser, the map policy's
// XML input, xml-to-json, the parse policy, SOAP Fault reading, and WSDL/XSD import. Each
// attempt is refused; a canary file is never read into anything and a canary server is never called.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DefinitionError } from '../../src/errors.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { AssemblyError, RawBody } from '../../src/policies/types.ts';
import { soapFaultText } from '../../src/soap/soap-fault.ts';
import { importWsdl } from '../../src/soap/wsdl-import.ts';
import { parseXml, XmlError } from '../../src/soap/xml.ts';
import { apiInput, makeContext } from '../policies/helpers.ts';

const secret = `CANARY-${process.pid}-${Date.now()}`;
let dir: string;
let canaryUrl: string;
let server: Server;
let hits = 0;
let networkUrl: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-xxe-'));
  const file = join(dir, 'canary.txt');
  writeFileSync(file, secret);
  canaryUrl = pathToFileURL(file).href;
  server = createServer((_req, res) => {
    hits++;
    res.end(secret);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  networkUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dtd`;
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
  assert.equal(hits, 0, 'no entry point fetched the canary server');
});

/** The attacks: external file entity, external DTD over the network, billion laughs, parameter entities. */
function attacks(): Record<string, string> {
  return {
    'external file entity': `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "${canaryUrl}">]><r>&x;</r>`,
    'external DTD over the network': `<?xml version="1.0"?><!DOCTYPE r SYSTEM "${networkUrl}"><r>a</r>`,
    'billion laughs': `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>`,
    'parameter entity': `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "${networkUrl}"> %p;]><r/>`,
    'lower-case doctype': `<!doctype r [<!ENTITY x SYSTEM "${canaryUrl}">]><r>&x;</r>`,
    'undeclared entity': '<r>&x;</r>',
  };
}

function assertNoCanary(value: unknown): void {
  assert.ok(!JSON.stringify(value ?? null).includes(secret), 'the canary must not appear');
}

describe('safe XML parser', () => {
  for (const [name, xml] of Object.entries(attacks())) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => parseXml(xml),
        (error: unknown) => error instanceof XmlError && (error.code === 'doctype' || error.code === 'entity'),
      );
    });
  }

  it('refuses U+0000 written in the text, where the tokeniser would keep it (and &#0;)', () => {
    for (const xml of ['<r>a\0b</r>', '<r a="x\0"/>', '<r>a&#0;b</r>'])
      assert.throws(
        () => parseXml(xml),
        (error: unknown) => error instanceof XmlError && (error.code === 'malformed' || error.code === 'entity'),
      );
  });

  it('refuses a document over the size limit before parsing it', () => {
    assert.throws(
      () => parseXml(`<r>${'a'.repeat(2000)}</r>`, { maxBytes: 1000 }),
      (error: unknown) => error instanceof XmlError && error.code === 'too-large',
    );
  });

  it('refuses nesting deeper than the limit', () => {
    const deep = `${'<a>'.repeat(150)}x${'</a>'.repeat(150)}`;
    assert.throws(
      () => parseXml(deep, { maxDepth: 100 }),
      (error: unknown) => error instanceof XmlError && error.code === 'too-deep',
    );
  });

  it('decodes only the predefined entities and character references', () => {
    const root = parseXml('<r a="&quot;x&quot;">&lt;&amp;&#65;&#x42;<![CDATA[&amp;]]></r>');
    assert.equal(root.attributes[0].value, '"x"');
    assert.deepEqual(root.children, ['<&AB', '&amp;']);
  });
});

function compileFlow(execute: unknown[], document: Record<string, unknown> = {}) {
  return compileAssembly({ execute }, apiInput(document), policyRegistry);
}

async function rejection(
  step: (ctx: ReturnType<typeof makeContext>) => unknown,
  ctx: ReturnType<typeof makeContext>,
): Promise<AssemblyError> {
  try {
    await step(ctx);
  } catch (error) {
    assert.ok(error instanceof AssemblyError, String(error));
    assertNoCanary(ctx.get('message'));
    assertNoCanary(error.message);
    return error;
  }
  assert.fail('the flow should have been refused');
}

describe('map policy XML input', () => {
  const map = {
    map: {
      title: 'read reply',
      inputs: { input: { variable: 'reply.body', content: 'application/xml' } },
      outputs: { output: { variable: 'message.body', content: 'application/json' } },
      actions: [{ set: 'output.value', from: 'input.r' }],
    },
  };
  for (const [name, xml] of Object.entries(attacks())) {
    it(`answers 502 naming the policy on a backend reply with ${name}`, async () => {
      const step = compileFlow([map]);
      const ctx = makeContext({
        vars: {
          reply: {
            status: { code: 200, reason: 'OK' },
            headers: {},
            body: new RawBody(Buffer.from(xml), 'text/xml'),
          },
        },
      });
      const error = await rejection(step, ctx);
      assert.equal(error.status, 502);
      assert.equal(error.policy, 'read reply');
      assert.match(error.message, /read reply/);
    });
  }

  it('answers 502 on a malformed reply', async () => {
    const step = compileFlow([map]);
    const ctx = makeContext({
      vars: {
        reply: {
          status: { code: 200, reason: 'OK' },
          headers: {},
          body: new RawBody(Buffer.from('<r><a></r>'), 'text/xml'),
        },
      },
    });
    assert.equal((await rejection(step, ctx)).status, 502);
  });
});

describe('xml-to-json policy', () => {
  for (const [name, xml] of Object.entries(attacks())) {
    it(`answers 400 on a request body with ${name}`, async () => {
      const step = compileFlow([{ 'xml-to-json': { version: '2.0.0', title: 'to json' } }]);
      const body = new RawBody(Buffer.from(xml), 'application/xml');
      const ctx = makeContext({
        message: {
          body,
          headers: { 'content-type': 'application/xml' },
          status: { code: 200, reason: 'OK' },
        },
      });
      ctx.request.body = body;
      const error = await rejection(step, ctx);
      assert.equal(error.status, 400);
    });

    it(`answers 502 on a backend reply with ${name}`, async () => {
      const step = compileFlow([{ 'xml-to-json': { version: '2.0.0', title: 'to json', input: 'reply' } }]);
      const ctx = makeContext({
        vars: {
          reply: {
            status: { code: 200, reason: 'OK' },
            headers: {},
            body: new RawBody(Buffer.from(xml), 'text/xml'),
          },
        },
      });
      const error = await rejection(step, ctx);
      assert.equal(error.status, 502);
      assert.equal(error.policy, 'to json');
    });
  }
});

describe('parse policy', () => {
  for (const [name, xml] of Object.entries(attacks())) {
    it(`answers 400 ParseError on ${name}`, async () => {
      const step = compileFlow([{ parse: { version: '2.0.0' } }]);
      const ctx = makeContext({
        message: {
          body: new RawBody(Buffer.from(xml), 'application/xml'),
          headers: {},
          status: { code: 200, reason: 'OK' },
        },
      });
      const error = await rejection(step, ctx);
      assert.equal(error.errorName, 'ParseError');
      assert.equal(error.status, 400);
    });
  }
});

describe('SOAP Fault reading', () => {
  it('does not expand entities in a Fault with a DTD', () => {
    const fault = `<!DOCTYPE e [<!ENTITY x SYSTEM "${canaryUrl}">]><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode><faultstring>&x;</faultstring></soap:Fault></soap:Body></soap:Envelope>`;
    assert.equal(soapFaultText(fault, 1 << 20), undefined);
  });
});

describe('WSDL import', () => {
  const wsdl = (doctype: string, body = '') =>
    `<?xml version="1.0"?>${doctype}<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:x">${body}</definitions>`;

  for (const [name, attack] of Object.entries(attacks())) {
    if (name === 'undeclared entity') continue;
    const doctype = /<!DOCTYPE[^[>]*(?:\[[\s\S]*?\])?\s*>/i.exec(attack)![0];
    it(`refuses a WSDL with ${name}, naming the file`, () => {
      assert.throws(
        () =>
          importWsdl('evil.wsdl', {
            'evil.wsdl': wsdl(doctype.replace(/<!doctype \w+/i, '<!DOCTYPE definitions')),
          }),
        (error: unknown) => {
          assert.ok(error instanceof DefinitionError);
          assert.equal(error.file, 'evil.wsdl');
          assert.match(error.problems[0].rule, /^xml-/);
          assertNoCanary(error.message);
          return true;
        },
      );
    });
  }

  it('refuses a WSDL holding U+0000, naming the file (it was imported, the character kept)', () => {
    assert.throws(
      () => importWsdl('nul.wsdl', { 'nul.wsdl': wsdl('', '<documentation>a\0b</documentation>') }),
      (error: unknown) =>
        error instanceof DefinitionError && error.file === 'nul.wsdl' && error.problems[0].rule === 'xml-malformed',
    );
  });

  it('refuses an imported XSD with an external entity, naming that XSD', () => {
    const main = wsdl(
      '',
      '<types><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:include schemaLocation="evil.xsd"/></xs:schema></types>',
    );
    const xsd = `<!DOCTYPE xs:schema [<!ENTITY x SYSTEM "${canaryUrl}">]><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:annotation><xs:documentation>&x;</xs:documentation></xs:annotation></xs:schema>`;
    assert.throws(
      () => importWsdl('main.wsdl', { 'main.wsdl': main, 'evil.xsd': xsd }),
      (error: unknown) =>
        error instanceof DefinitionError && error.file === 'evil.xsd' && error.problems[0].rule === 'xml-doctype',
    );
  });

  it('never fetches a remote schemaLocation', () => {
    const main = wsdl(
      '',
      `<types><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:import namespace="urn:y" schemaLocation="${networkUrl}"/></xs:schema></types>`,
    );
    assert.throws(
      () => importWsdl('main.wsdl', { 'main.wsdl': main }),
      (error: unknown) => error instanceof DefinitionError && error.problems[0].rule === 'remote-location',
    );
  });

  it('refuses a schemaLocation that climbs out of the files given', () => {
    const main = wsdl(
      '',
      '<types><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:x"><xs:include schemaLocation="../../etc/passwd"/></xs:schema></types>',
    );
    assert.throws(
      () => importWsdl('main.wsdl', { 'main.wsdl': main }),
      (error: unknown) => error instanceof DefinitionError && error.problems[0].rule === 'location-outside',
    );
  });
});
