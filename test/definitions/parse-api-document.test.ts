import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DefinitionError } from '../../src/errors.ts';
import { parseApiDocument as parseDocument } from '../../src/definitions/index.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { fixture } from './fixtures.ts';

/** The API document parser with the policies' assembly check, as the management plane runs it. */
const parseApiDocument = (text: string, file: string) => parseDocument(text, file, assemblyProblems);

function parse(name: string) {
  return parseApiDocument(fixture(name), name);
}

describe('parseApiDocument: Swagger 2.0 with x-ibm-configuration (logistics)', () => {
  const api = parse('logistics.yaml');

  it('takes name, version, title and base path from the document', () => {
    assert.deepEqual(
      [api.name, api.version, api.title, api.basePath, api.openapi],
      ['logistics', '2.0.0', 'logistics', '/logistics', '2.0'],
    );
  });

  it('lists both operations with their query parameter folded into a schema', () => {
    assert.deepEqual(
      api.operations.map((operation) => [operation.id, operation.verb, operation.path]),
      [
        ['shipping.calc', 'get', '/shipping'],
        ['get.stores', 'get', '/stores'],
      ],
    );
    assert.deepEqual(api.operations[0].parameters, [
      {
        name: 'zip',
        in: 'query',
        required: true,
        schema: { type: 'string' },
        description: 'Destination zip code.',
      },
    ]);
  });

  it('applies the API-level security requirement to each operation', () => {
    assert.deepEqual(api.operations[1].security, [{ clientID: [] }]);
  });

  it('marks the X-IBM-Client-Id key as the client id', () => {
    assert.deepEqual(api.securitySchemes.clientID, {
      type: 'apiKey',
      name: 'X-IBM-Client-Id',
      in: 'header',
      role: 'client-id',
    });
  });

  it('reads properties and catalog overrides', () => {
    assert.deepEqual(api.properties.shipping_svc_url, {
      value: 'https://thinkibm-services.mybluemix.net/shipping/calculate',
      description: 'Location of the shipping calculator service',
      encoded: false,
    });
    assert.deepEqual(api.properties.maps_url, { value: 'https://www.google.com/maps' });
    assert.deepEqual(api.catalogProperties, {
      sandbox: { shipping_svc_url: 'http://127.0.0.1:4001/shipping/calculate' },
    });
  });

  it('reads activity-log, buffering, cors and type as written', () => {
    assert.deepEqual(api.activityLog, { enabled: true, successContent: 'payload', errorContent: 'activity' });
    assert.equal(api.buffering, true);
    assert.deepEqual(api.cors, { enabled: true });
    assert.equal(api.type, 'rest');
  });

  it('keeps the assembly with its catch and finally lists', () => {
    assert.equal(api.assembly?.execute.length, 1);
    assert.equal(api.assembly?.catch?.length, 2);
    assert.deepEqual(api.assembly?.finally, []);
    assert.equal(api.document.basePath, '/logistics');
  });
});

describe('parseApiDocument: Swagger 2.0 without x-ibm-configuration', () => {
  const api = parse('inventory-plain.yaml');

  it('slugs the title into the name and trims the trailing slash of basePath', () => {
    assert.equal(api.name, 'store-inventory');
    assert.equal(api.basePath, '/api');
    assert.equal(api.description, 'Items of the accessories store.');
  });

  it("applies API Connect's defaults for the absent settings", () => {
    assert.deepEqual(api.activityLog, { enabled: true, successContent: 'activity', errorContent: 'payload' });
    assert.equal(api.buffering, false);
    assert.deepEqual(api.cors, { enabled: true });
    assert.equal(api.type, 'rest');
    assert.equal(api.assembly, undefined);
    assert.deepEqual(api.properties, {});
  });

  it('folds type, format, items and constraints of non-body parameters into schemas', () => {
    const find = api.operations.find((operation) => operation.id === 'Item.find');
    assert.deepEqual(
      find?.parameters.map((parameter) => parameter.schema),
      [
        { type: 'array', items: { type: 'string' } },
        { type: 'integer', default: 20, maximum: 100 },
      ],
    );
  });

  it('uses the body parameter schema as the request body schema', () => {
    const create = api.operations.find((operation) => operation.id === 'Item.create');
    assert.deepEqual(create?.requestBodySchema, { $ref: '#/definitions/Item' });
    assert.deepEqual(create?.parameters[0], {
      name: 'data',
      in: 'body',
      required: true,
      schema: { $ref: '#/definitions/Item' },
    });
  });

  it('merges $ref and path-level parameters, the operation winning on name and location', () => {
    const byId = api.operations.find((operation) => operation.id === 'Item.findById');
    assert.deepEqual(byId?.parameters, [
      { name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64', minimum: 1 } },
      {
        name: 'X-Trace',
        in: 'header',
        required: true,
        schema: { type: 'string' },
        description: 'overrides the path-level header',
      },
    ]);
  });

  it('builds an object schema from form data parameters, a file as binary string', () => {
    const upload = api.operations.find((operation) => operation.id === 'Item.upload');
    assert.deepEqual(upload?.requestBodySchema, {
      type: 'object',
      properties: { picture: { type: 'string', format: 'binary' }, caption: { type: 'string' } },
      required: ['picture'],
    });
  });

  it('lets operation security override the API level, an empty list meaning none', () => {
    const security = Object.fromEntries(api.operations.map((operation) => [operation.id, operation.security]));
    assert.deepEqual(security['Item.find'], []);
    assert.deepEqual(security['Item.findById'], [{ queryId: [] }]);
    assert.deepEqual(security['Item.create'], [{ clientId: [], clientSecret: [] }]);
  });

  it('gives client-id and client-secret roles by key name, case-insensitively', () => {
    assert.equal(api.securitySchemes.clientSecret.role, 'client-secret');
    assert.deepEqual(api.securitySchemes.queryId, {
      type: 'apiKey',
      name: 'client_id',
      in: 'query',
      role: 'client-id',
    });
    assert.deepEqual(api.securitySchemes.basicAuth, { type: 'basic' });
  });
});

describe('parseApiDocument: OpenAPI 3.0', () => {
  const api = parse('orders-oas30.yaml');

  it('takes the base path from the first server URL, variables substituted', () => {
    assert.equal(api.basePath, '/orders/v1');
    assert.equal(api.openapi, '3.0');
  });

  it('reads the JSON schema of a $ref request body, preferring application/json', () => {
    assert.deepEqual(api.operations[0].requestBodySchema, { $ref: '#/components/schemas/Order' });
  });

  it('resolves component parameters and reads a schema from parameter content', () => {
    assert.deepEqual(api.operations[1].parameters, [
      { name: 'orderId', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Z0-9]+$' } },
      { name: 'fields', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
    ]);
  });

  it('reads components.securitySchemes and operation security', () => {
    assert.deepEqual(api.securitySchemes, {
      clientId: { type: 'apiKey', name: 'X-IBM-Client-Id', in: 'header', role: 'client-id' },
      clientSecret: { type: 'apiKey', name: 'X-IBM-Client-Secret', in: 'header', role: 'client-secret' },
      bearer: { type: 'http' },
    });
    assert.deepEqual(api.operations[1].security, [{ clientId: [], clientSecret: [] }]);
  });

  it('reads cors disabled', () => {
    assert.deepEqual(api.cors, { enabled: false });
  });
});

describe('parseApiDocument: OpenAPI 3.1 as JSON', () => {
  const api = parse('geocoder-oas31.json');

  it('accepts a 3.1 document without responses, with a type list', () => {
    assert.equal(api.openapi, '3.1');
    assert.equal(api.name, 'geocoder');
    assert.equal(api.basePath, '');
    assert.deepEqual(api.operations[0].parameters[0].schema, { type: ['string', 'null'] });
    assert.deepEqual(api.operations[0].security, []);
  });
});

describe('parseApiDocument: v5 financing with a WSDL target', () => {
  const api = parse('financing-v5.yaml');

  it('accepts v5 policies without version, stop-on-error [null] and the activity-log policy', () => {
    assert.deepEqual(
      api.assembly?.execute.map((entry) => Object.keys(entry as object)[0]),
      ['activity-log', 'map', 'invoke', 'map', 'switch'],
    );
  });

  it('resolves map refs into the target and refs inside the target against the target', () => {
    assert.doesNotThrow(() => parse('financing-v5.yaml'));
    const broken = fixture('financing-v5.yaml').replace(
      "{ $ref: '#/definitions/financingResult' }",
      "{ $ref: '#/definitions/financingResultX' }",
    );
    assert.throws(
      () => parseApiDocument(broken, 'financing-v5.yaml'),
      (error: DefinitionError) => {
        assert.deepEqual(
          error.problems.map((problem) => [problem.path, problem.rule]),
          [
            [
              '$.x-ibm-configuration.targets.financingService.definitions.financingOutput.properties.Envelope.properties.Body.properties.financingResult.$ref',
              'unresolved-ref',
            ],
            // The map reads that schema as the gateway compiles it (its XML input), and names the input too.
            ['$.x-ibm-configuration.assembly.execute[3].map.inputs.input', 'unresolved-ref'],
          ],
        );
        return true;
      },
    );
  });

  it('reads catalog properties of several catalogs', () => {
    assert.deepEqual(Object.keys(api.catalogProperties), ['apic-dev', 'sb']);
    assert.equal(api.properties.financing_svc.value, 'https://thinkibm-services.mybluemix.net/financing/calculate');
  });
});
