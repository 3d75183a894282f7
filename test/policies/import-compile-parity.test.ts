/**
 * Fail closed at import: what the gateway's flow compiler refuses when an API is published is
 * refused when the API document is imported, with the same path and rule. Each document is read
 * by the import (parseApiDocument with the assembly check, as every import path runs it) and
 * compiled as a gateway compiles it for a catalog (compileApi), so the two stay in step.
 *
 * `gaps` were imported and refused only at publish before; `agreed` were refused by both
 * already. What depends on the gateway or the catalog it is published to (TLS profiles, named
 * limits, user registries; API properties a catalog overrides) stays a publish-time refusal.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { parseApiDocument } from '../../src/definitions/index.ts';
import { parseText } from '../../src/definitions/parse-text.ts';
import { DefinitionError } from '../../src/errors.ts';
import { compileApi } from '../../src/gateway/compile-api.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { PolicyCompileError } from '../../src/policies/types.ts';
import { createMemoryCounterStore } from '../../src/ratelimit/memory.ts';

type Json = Record<string, unknown>;

const at = '$.x-ibm-configuration.assembly';

/** An API with one POST operation whose body and answer are `#/definitions/d`, running `execute`. */
function api(execute: unknown[] | undefined, extra: { ibm?: Json; definitions?: Json } = {}): Json {
  const assembly = execute === undefined ? {} : { assembly: { execute } };
  return {
    swagger: '2.0',
    info: { title: 'parity', version: '1.0.0', 'x-ibm-name': 'parity' },
    basePath: '/parity',
    security: [],
    paths: {
      '/a': {
        post: {
          operationId: 'create',
          parameters: [{ name: 'b', in: 'body', schema: { $ref: '#/definitions/d' } }],
          responses: { '200': { description: 'ok', schema: { $ref: '#/definitions/d' } } },
        },
      },
    },
    definitions: { d: { type: 'object', properties: { x: { type: 'string' } } }, ...extra.definitions },
    'x-ibm-configuration': { ...assembly, ...extra.ibm },
  };
}

const one = (entry: Json, extra?: { ibm?: Json; definitions?: Json }) => api([entry], extra);

/** A map from `input` (request.body) to `output` (message.body) with these actions. */
const map = (actions: unknown[]) =>
  one({
    map: {
      inputs: { input: { schema: { type: 'object' }, variable: 'request.body' } },
      outputs: { output: { schema: { type: 'object' }, variable: 'message.body' } },
      actions,
    },
  });
const mapPorts = (inputs: Json) => one({ map: { inputs, outputs: {}, actions: [] } });

interface Refusal {
  path: string;
  rule: string;
}

/** The import's first problem, or undefined when the import accepts the document. */
function importRefusal(document: Json): Refusal | undefined {
  try {
    parseApiDocument(JSON.stringify(document), 'parity.json', assemblyProblems);
    return undefined;
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    const { path, rule } = error.problems[0] as Refusal;
    return { path, rule };
  }
}

/** The gateway's refusal of the document in `catalog`, or undefined when it compiles. */
function publishRefusal(document: Json, catalog = 'sandbox', settings: Json = {}): Refusal | undefined {
  try {
    compileApi(
      { id: 'parity-1', document: JSON.stringify(document) } as Parameters<typeof compileApi>[0],
      { id: 'catalog-1', name: catalog, orgId: 'org-1', orgName: 'org' },
      {
        registry: policyRegistry,
        logger: pino({ level: 'silent' }),
        settings: {
          maxBackendBodyBytes: 1 << 20,
          tlsProfiles: {},
          script: { timeoutMs: 200, memoryBytes: 16 * 1024 * 1024 },
          counters: createMemoryCounterStore(),
          namedLimits: {},
          ...settings,
        },
      },
      new Map(),
    );
    return undefined;
  } catch (error) {
    assert.ok(error instanceof PolicyCompileError, `a PolicyCompileError, got ${String(error)}`);
    return { path: error.path, rule: error.rule };
  }
}

interface Case {
  what: string;
  document: Json;
  /** Where the import names the problem (and the gateway, unless `publishPath` says otherwise). */
  path: string;
  rule: string;
  publishPath?: string;
}

const gaps: Case[] = [
  {
    what: 'an invoke without a target-url',
    document: one({ invoke: { 'target-url': '' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'required',
  },
  {
    what: 'a proxy without a target-url',
    document: one({ proxy: { 'target-url': '' } }),
    path: `${at}.execute[0].proxy.target-url`,
    rule: 'required',
  },
  {
    what: 'a target-url that is no URL',
    document: one({ invoke: { 'target-url': 'ht!tp://[bad' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url that is only a path',
    document: one({ invoke: { 'target-url': '/just/a/path' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url whose base is no URL, before a request value',
    document: one({ invoke: { 'target-url': 'ht!tp://[bad$(request.path)' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url of a scheme the gateway does not call (ftp:)',
    document: one({ invoke: { 'target-url': 'ftp://files.example/x' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url of a scheme the gateway does not call, after a space the URL parser drops',
    document: one({ invoke: { 'target-url': ' ftp://files.example/x' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url of a scheme the gateway does not call (file:), before a request value',
    document: one({ proxy: { 'target-url': 'file:///etc/$(request.path)' } }),
    path: `${at}.execute[0].proxy.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url whose host the request chooses',
    document: one({ invoke: { 'target-url': 'http://{host}/x' } }),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'a target-url whose property is no URL in any catalog',
    document: one(
      { invoke: { 'target-url': '$(backend)/x' } },
      { ibm: { properties: { backend: { value: 'ht!tp://[bad' } } } },
    ),
    path: `${at}.execute[0].invoke.target-url`,
    rule: 'format',
  },
  {
    what: 'an invoke nested in an if',
    document: one({ if: { condition: 'true', execute: [{ invoke: { 'target-url': '' } }] } }),
    path: `${at}.execute[0].if.execute[0].invoke.target-url`,
    rule: 'required',
  },
  {
    what: 'an invoke in a catch',
    document: {
      ...api([]),
      'x-ibm-configuration': {
        assembly: { execute: [], catch: [{ errors: ['E'], execute: [{ invoke: { 'target-url': '' } }] }] },
      },
    },
    path: `${at}.catch[0].execute[0].invoke.target-url`,
    rule: 'required',
  },
  {
    what: 'no assembly, and a target-url property that is no URL (the default invoke)',
    document: api(undefined, { ibm: { properties: { 'target-url': { value: 'ht!tp://[bad' } } } }),
    path: '$.x-ibm-configuration.properties.target-url',
    rule: 'format',
    publishPath: `${at}.execute[0].invoke.target-url`,
  },
  {
    what: 'a jwt-generate lifetime of 0',
    document: one({ 'jwt-generate': { 'jws-jwk': 'k', 'exp-claim': 0 } }),
    path: `${at}.execute[0].jwt-generate.exp-claim`,
    rule: 'range',
  },
  {
    what: 'a jwt-validate accepting alg none',
    document: one({ 'jwt-validate': { 'jws-jwk': 'k', 'jws-algorithms': ['none'] } }),
    path: `${at}.execute[0].jwt-validate.jws-algorithms`,
    rule: 'enum',
  },
  {
    what: 'a jwks-url that is not http(s)',
    document: one({ 'jwt-validate': { 'jwks-url': 'ftp://keys.example/jwks' } }),
    path: `${at}.execute[0].jwt-validate.jwks-url`,
    rule: 'url',
  },
  // The gateway threw a TypeError here (no PolicyCompileError, no path).
  {
    what: 'a jwks-url that does not parse',
    document: one({ 'jwt-validate': { 'jwks-url': 'http://[bad/jwks' } }),
    path: `${at}.execute[0].jwt-validate.jwks-url`,
    rule: 'url',
  },
  {
    what: 'a jwks-url whose property no catalog defines',
    document: one({ 'jwt-validate': { 'jwks-url': '$(idp)/jwks' } }),
    path: `${at}.execute[0].jwt-validate.jwks-url`,
    rule: 'url',
  },
  {
    what: 'a jws-jwk property the API does not have',
    document: one({ 'jwt-validate': { 'jws-jwk': 'api.properties.nokey' } }),
    path: `${at}.execute[0].jwt-validate.jws-jwk`,
    rule: 'unknown-property',
  },
  {
    what: 'a gatewayscript with an empty source',
    document: one({ gatewayscript: { source: '' } }),
    path: `${at}.execute[0].gatewayscript.source`,
    rule: 'type',
  },
  {
    what: 'a throw with an empty name',
    document: one({ throw: { name: '' } }),
    path: `${at}.execute[0].throw.name`,
    rule: 'type',
  },
  {
    what: 'a validate with nothing to validate against',
    document: one({ validate: {} }),
    path: `${at}.execute[0].validate.definition`,
    rule: 'required',
  },
  {
    what: 'validate-against definition without a definition',
    document: one({ validate: { 'validate-against': 'definition' } }),
    path: `${at}.execute[0].validate.definition`,
    rule: 'required',
  },
  {
    what: 'a validate definition whose refs loop',
    document: one(
      { validate: { definition: '#/definitions/a' } },
      { definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } } },
    ),
    path: `${at}.execute[0].validate.definition`,
    rule: 'unresolved-ref',
  },
  {
    what: 'a validate definition that is recursive',
    document: one(
      { validate: { definition: 'node' } },
      {
        definitions: {
          node: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/definitions/node' } } } },
        },
      },
    ),
    path: `${at}.execute[0].validate.definition`,
    rule: 'unresolved-ref',
  },
  {
    what: 'a validate body-param over an operation whose schema is recursive',
    document: one(
      { validate: { 'validate-against': 'body-param' } },
      {
        definitions: {
          d: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/definitions/d' } } } },
        },
      },
    ),
    path: `${at}.execute[0].validate (POST /a)`,
    rule: 'unresolved-ref',
  },
  {
    what: 'a validate definition ajv refuses',
    document: one({ validate: { definition: 'x' } }, { definitions: { x: { type: 'string', minLength: -1 } } }),
    path: `${at}.execute[0].validate.definition`,
    rule: 'invalid-schema',
  },
  {
    what: 'a map set path reaching a prototype',
    document: map([{ set: 'output.__proto__.x', from: 'input.x' }]),
    path: `${at}.execute[0].map.actions[0].set`,
    rule: 'map-path',
  },
  {
    what: 'a map from path reaching a prototype',
    document: map([{ set: 'output.x', from: 'input.constructor.x' }]),
    path: `${at}.execute[0].map.actions[0].from`,
    rule: 'map-path',
  },
  {
    what: 'a map from path naming no input',
    document: map([{ set: 'output.x', from: 'other.x' }]),
    path: `${at}.execute[0].map.actions[0].from`,
    rule: 'unknown-input',
  },
  {
    what: 'a map set path naming no output',
    document: map([{ set: 'other.x', from: 'input.x' }]),
    path: `${at}.execute[0].map.actions[0].set`,
    rule: 'unknown-output',
  },
  {
    what: 'a map action with both set and create',
    document: map([{ set: 'output.x', create: 'output.y', from: 'input.x' }]),
    path: `${at}.execute[0].map.actions[0]`,
    rule: 'map-action',
  },
  {
    what: 'a map action with nothing to write',
    document: map([{ set: 'output.x' }]),
    path: `${at}.execute[0].map.actions[0]`,
    rule: 'map-action',
  },
  {
    what: 'a map action with nested actions and no foreach',
    document: map([{ set: 'output.x', from: 'input.x', actions: [] }]),
    path: `${at}.execute[0].map.actions[0].actions`,
    rule: 'map-action',
  },
  {
    what: 'a map foreach with a from',
    document: map([{ set: 'output.x', foreach: 'input.items', from: 'input.x', actions: [] }]),
    path: `${at}.execute[0].map.actions[0].from`,
    rule: 'map-action',
  },
  {
    what: 'a nested map action reaching a prototype',
    document: map([{ set: 'output.x', foreach: 'input.items', actions: [{ set: 'a', from: '__proto__' }] }]),
    path: `${at}.execute[0].map.actions[0].actions[0].from`,
    rule: 'map-path',
  },
  {
    what: 'a map input without a variable',
    document: mapPorts({ input: { variable: '' } }),
    path: `${at}.execute[0].map.inputs.input.variable`,
    rule: 'required',
  },
  {
    what: 'a map input named like its variable',
    document: mapPorts({ request: { variable: 'request.body' } }),
    path: `${at}.execute[0].map.inputs.request`,
    rule: 'input-name-is-variable',
  },
  {
    what: 'a map input variable reaching a prototype',
    document: mapPorts({ input: { variable: 'message.__proto__' } }),
    path: `${at}.execute[0].map.inputs.input.variable`,
    rule: 'variable-name',
  },
  {
    what: 'a map input of a content type it cannot read',
    document: mapPorts({ input: { variable: 'request.body', content: 'text/csv' } }),
    path: `${at}.execute[0].map.inputs.input.content`,
    rule: 'content-type',
  },
  {
    what: 'a map input schema whose refs loop',
    document: one(
      { map: { inputs: { input: { variable: 'request.body', $ref: '#/definitions/a' } }, outputs: {}, actions: [] } },
      { definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } } },
    ),
    path: `${at}.execute[0].map.inputs.input.$ref`,
    rule: 'unresolved-ref',
  },
];

const agreed: Case[] = [
  {
    what: 'an unknown policy',
    document: one({ nope: {} }),
    path: `${at}.execute[0].nope`,
    rule: 'unknown-policy',
    publishPath: `${at}.execute[0]`,
  },
  {
    what: 'a policy version not supported',
    document: one({ throw: { name: 'E', version: '9.0.0' } }),
    path: `${at}.execute[0].throw.version`,
    rule: 'unsupported-version',
  },
  {
    what: 'a blank if condition',
    document: one({ if: { condition: '  ', execute: [] } }),
    path: `${at}.execute[0].if.condition`,
    rule: 'required',
  },
  {
    what: 'a condition that is not JSONata',
    document: one({ if: { condition: '$uppercase(', execute: [] } }),
    path: `${at}.execute[0].if.condition`,
    rule: 'condition-syntax',
  },
  {
    what: 'a v5 negation',
    document: one({ switch: { case: [{ condition: "!(request.verb === 'GET')", execute: [] }] } }),
    path: `${at}.execute[0].switch.case[0].condition`,
    rule: 'unsupported-condition',
  },
  {
    what: 'two otherwise cases',
    document: one({ switch: { case: [{ otherwise: [] }, { otherwise: [] }] } }),
    path: `${at}.execute[0].switch.case[1]`,
    rule: 'switch-case',
  },
  {
    what: 'a map value that is not JSONata',
    document: map([{ set: 'output.x', from: 'input.x', value: '$uppercase(' }]),
    path: `${at}.execute[0].map.actions[0].value`,
    rule: 'expression-syntax',
  },
  {
    what: 'an invoke timeout over a day',
    document: one({ invoke: { 'target-url': 'http://backend.example/', timeout: 100_000 } }),
    path: `${at}.execute[0].invoke.timeout`,
    rule: 'range',
  },
  {
    what: 'a throw status out of range',
    document: one({ throw: { name: 'E', 'error-status-code': 99 } }),
    path: `${at}.execute[0].throw.error-status-code`,
    rule: 'status-code',
  },
  {
    what: 'a set-variable name reaching a prototype',
    document: one({ 'set-variable': { actions: [{ set: 'a.__proto__.b', value: 'x' }] } }),
    path: `${at}.execute[0].set-variable.actions[0].set`,
    rule: 'variable-name',
  },
  {
    what: 'validate-against wsdl',
    document: one({ validate: { 'validate-against': 'wsdl' } }),
    path: `${at}.execute[0].validate.validate-against`,
    rule: 'enum',
  },
  {
    what: 'a validate definition that does not resolve',
    document: one({ validate: { definition: 'nope' } }),
    path: `${at}.execute[0].validate.definition`,
    rule: 'unresolved-ref',
  },
  {
    what: 'an operation-switch case naming no operation',
    document: one({ 'operation-switch': { case: [{ operations: ['nope'], execute: [] }] } }),
    path: `${at}.execute[0].operation-switch.case[0].operations[0]`,
    rule: 'unknown-operation',
  },
  {
    what: 'a jwt-validate claim pattern with a backreference',
    document: one({ 'jwt-validate': { 'jws-jwk': 'k', 'iss-claim': '(a)\\1' } }),
    path: `${at}.execute[0].jwt-validate.iss-claim`,
    rule: 'unsupported-pattern',
  },
  {
    what: 'a json-to-xml convention not known',
    document: one({ 'json-to-xml': { 'conversion-type': 'nope' } }),
    path: `${at}.execute[0].json-to-xml.conversion-type`,
    rule: 'enum',
  },
  {
    what: 'a ratelimit count limit',
    document: one({ ratelimit: { 'count-limit': [{ name: 'c' }] } }),
    path: `${at}.execute[0].ratelimit.count-limit`,
    rule: 'unsupported',
  },
];

function assertRefusedByBoth({ document, path, rule, publishPath }: Case): void {
  assert.deepEqual(importRefusal(document), { path, rule }, 'the import refuses it');
  assert.deepEqual(publishRefusal(document), { path: publishPath ?? path, rule }, 'the gateway refuses it');
}

describe('what publish refuses, import refuses (gaps found and closed)', () => {
  for (const entry of gaps) test(entry.what, () => assertRefusedByBoth(entry));
});

describe('what publish refuses, import refused already', () => {
  for (const entry of agreed) test(entry.what, () => assertRefusedByBoth(entry));
});

describe('what depends on the catalog or the gateway stays a publish-time refusal', () => {
  test('a target-url property valid in the catalog the document gives it, and in no other', () => {
    const document = one(
      { invoke: { 'target-url': '$(backend)/x' } },
      {
        ibm: {
          properties: { backend: { value: 'ht!tp://[bad' } },
          catalogs: { sandbox: { properties: { backend: 'http://backend.example' } } },
        },
      },
    );
    assert.equal(importRefusal(document), undefined, 'the import accepts it: sandbox can run it');
    assert.equal(publishRefusal(document, 'sandbox'), undefined);
    assert.deepEqual(publishRefusal(document, 'production'), {
      path: `${at}.execute[0].invoke.target-url`,
      rule: 'format',
    });
  });

  test('no assembly and no target-url in one catalog: the default throw compiles there', () => {
    const document = api(undefined, {
      ibm: {
        properties: { 'target-url': { value: 'ht!tp://[bad' } },
        catalogs: { sandbox: { properties: { 'target-url': '' } } },
      },
    });
    assert.equal(importRefusal(document), undefined);
    assert.equal(publishRefusal(document, 'sandbox'), undefined);
    assert.equal(publishRefusal(document, 'production')?.rule, 'format');
  });

  test('a TLS profile, a catalog-named limit and a user registry only a gateway or catalog holds', () => {
    const cases: Array<[Json, string]> = [
      [{ invoke: { 'target-url': 'https://backend.example/', 'tls-profile': 'nope' } }, 'unknown-tls-profile'],
      [{ 'jwt-validate': { 'jwks-url': 'https://idp.example/jwks', 'tls-profile': 'nope' } }, 'unknown-tls-profile'],
      [{ ratelimit: { source: 'catalog-named', 'rate-limit': [{ name: 'x' }] } }, 'unknown-limit'],
      [{ 'user-security': { 'user-registry': 'staff' } }, 'unknown-user-registry'],
    ];
    for (const [entry, rule] of cases) {
      assert.equal(importRefusal(one(entry)), undefined, JSON.stringify(entry));
      assert.equal(publishRefusal(one(entry))?.rule, rule, JSON.stringify(entry));
    }
  });
});

describe('the reading import and publish share', () => {
  test('a v5 target whose refs resolve in the target publishes, as it imports', () => {
    const file = resolve(import.meta.dirname, '../fixtures/definitions/financing-v5.yaml');
    const text = readFileSync(file, 'utf8');
    const document = parseText(text, file).value as Json;
    assert.equal(importRefusal(document), undefined);
    // The map's output schema names #/definitions/financingRequest inside the target: it was an
    // unresolved-ref at publish, read against the whole document.
    assert.equal(publishRefusal(document), undefined);
  });

  test('a validate definition inside a target reads its refs in the target', () => {
    const document = one(
      { validate: { definition: '#/x-ibm-configuration/targets/t/definitions/a' } },
      {
        ibm: {
          targets: {
            t: {
              definitions: {
                a: { type: 'object', properties: { b: { $ref: '#/definitions/b' } } },
                b: { type: 'string' },
              },
            },
          },
        },
      },
    );
    assert.equal(importRefusal(document), undefined);
    assert.equal(publishRefusal(document), undefined);
  });

  test('a schema that inlines to more than 10,000 nodes is refused by both, quickly', () => {
    // Four definitions, each naming the next ten times: 23,000 nodes once inlined (ajv took 5 s
    // to compile it at publish, a fifth level 80 s).
    const definitions: Json = {};
    for (let level = 0; level < 4; level++) {
      const properties: Json = {};
      for (let index = 0; index < 10; index++)
        properties[`p${index}`] = level < 3 ? { $ref: `#/definitions/n${level + 1}` } : { type: 'string' };
      definitions[`n${level}`] = { type: 'object', properties };
    }
    const started = performance.now();
    assertRefusedByBoth({
      what: 'schema-too-large',
      document: one({ validate: { definition: 'n0' } }, { definitions }),
      path: `${at}.execute[0].validate.definition`,
      rule: 'schema-too-large',
    });
    assert.ok(performance.now() - started < 2000, `refused in ${Math.round(performance.now() - started)} ms`);
  });
});
