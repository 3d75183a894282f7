/**
 * Compact structural schemas for the documents Portico imports: Swagger 2.0, OpenAPI 3.0/3.1
 * and the `x-ibm-configuration` extension. They check the shape Portico relies on (required
 * fields, types, parameter forms, vendor settings), not every rule of the official meta-schemas;
 * JSON schemas inside the document (definitions, components) are only checked to be objects.
 * `x-` extensions are accepted wherever OpenAPI allows them.
 */
import type { JSONSchema } from './json-schema.ts';

const extensions = { '^x-': {} };
const anySchema: JSONSchema = { type: ['object', 'boolean'] };
const stringArray: JSONSchema = { type: 'array', items: { type: 'string' } };
const stringMap: JSONSchema = { type: 'object', additionalProperties: { type: 'string' } };
const securityRequirements: JSONSchema = {
  type: 'array',
  items: { type: 'object', additionalProperties: stringArray },
};
const verbs = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

const info: JSONSchema = {
  type: 'object',
  required: ['title', 'version'],
  additionalProperties: false,
  patternProperties: extensions,
  properties: {
    title: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    summary: { type: 'string' },
    termsOfService: { type: 'string' },
    contact: {
      type: 'object',
      properties: { name: { type: 'string' }, url: { type: 'string' }, email: { type: 'string' } },
    },
    license: {
      type: 'object',
      properties: { name: { type: 'string' }, url: { type: 'string' }, identifier: { type: 'string' } },
    },
    'x-ibm-name': { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
  },
};

const tags: JSONSchema = {
  type: 'array',
  items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
};
const externalDocs: JSONSchema = {
  type: 'object',
  required: ['url'],
  properties: { url: { type: 'string' }, description: { type: 'string' } },
};
const refOnly: JSONSchema = { type: 'object', required: ['$ref'], properties: { $ref: { type: 'string' } } };
const hasRef: JSONSchema = { required: ['$ref'] };

/** A path item whose operations use `operation`; `parameter` types its parameter list. */
function pathItem(operation: JSONSchema, parameter: JSONSchema, extra: Record<string, JSONSchema>): JSONSchema {
  return {
    type: 'object',
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      ...Object.fromEntries(verbs.map((verb) => [verb, operation])),
      parameters: { type: 'array', items: parameter },
      $ref: { type: 'string' },
      ...extra,
    },
  };
}

function paths(item: JSONSchema): JSONSchema {
  return { type: 'object', additionalProperties: false, patternProperties: { '^/': item, ...extensions } };
}

// ── Swagger 2.0 ──────────────────────────────────────────────────────────────────────────
const swaggerTypes = ['string', 'number', 'integer', 'boolean', 'array', 'file'];

const swaggerItems: JSONSchema = {
  type: 'object',
  properties: {
    type: { enum: swaggerTypes.filter((type) => type !== 'file') },
    format: { type: 'string' },
    items: { $ref: '#/definitions/items' },
    collectionFormat: { enum: ['csv', 'ssv', 'tsv', 'pipes', 'multi'] },
    enum: { type: 'array' },
  },
};

const swaggerParameter: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['name', 'in'],
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      name: { type: 'string', minLength: 1 },
      in: { enum: ['query', 'header', 'path', 'formData', 'body'] },
      description: { type: 'string' },
      required: { type: 'boolean' },
      schema: anySchema,
      type: { enum: swaggerTypes },
      format: { type: 'string' },
      items: { $ref: '#/definitions/items' },
      collectionFormat: { enum: ['csv', 'ssv', 'tsv', 'pipes', 'multi'] },
      allowEmptyValue: { type: 'boolean' },
      default: {},
      enum: { type: 'array' },
      maximum: { type: 'number' },
      exclusiveMaximum: { type: 'boolean' },
      minimum: { type: 'number' },
      exclusiveMinimum: { type: 'boolean' },
      maxLength: { type: 'integer' },
      minLength: { type: 'integer' },
      pattern: { type: 'string' },
      maxItems: { type: 'integer' },
      minItems: { type: 'integer' },
      uniqueItems: { type: 'boolean' },
      multipleOf: { type: 'number' },
      example: {},
    },
    allOf: [
      // Swagger 2.0 §Parameter Object: a body parameter has a schema, the others a type; path parameters are required.
      {
        if: { properties: { in: { const: 'body' } } },
        then: { required: ['schema'] },
        else: { required: ['type'] },
      },
      {
        if: { properties: { in: { const: 'path' } } },
        then: { required: ['required'], properties: { required: { const: true } } },
      },
    ],
  },
};

const swaggerResponse: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['description'],
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      description: { type: 'string' },
      schema: anySchema,
      headers: { type: 'object' },
      examples: { type: 'object' },
    },
  },
};

const swaggerOperation: JSONSchema = {
  type: 'object',
  required: ['responses'],
  additionalProperties: false,
  patternProperties: extensions,
  properties: {
    tags: stringArray,
    summary: { type: 'string' },
    description: { type: 'string' },
    externalDocs,
    operationId: { type: 'string', minLength: 1 },
    consumes: stringArray,
    produces: stringArray,
    parameters: { type: 'array', items: { $ref: '#/definitions/parameter' } },
    responses: { type: 'object', minProperties: 1, additionalProperties: { $ref: '#/definitions/response' } },
    schemes: stringArray,
    deprecated: { type: 'boolean' },
    security: securityRequirements,
  },
};

const swaggerSecurityScheme: JSONSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['apiKey', 'basic', 'oauth2'] },
    description: { type: 'string' },
    name: { type: 'string' },
    in: { enum: ['header', 'query'] },
    flow: { enum: ['implicit', 'password', 'application', 'accessCode'] },
    authorizationUrl: { type: 'string' },
    tokenUrl: { type: 'string' },
    scopes: stringMap,
  },
  if: { properties: { type: { const: 'apiKey' } } },
  then: { required: ['name', 'in'] },
};

/** Swagger 2.0, with the `x-ibm-configuration` checked separately. */
export const swagger2Schema: JSONSchema = {
  type: 'object',
  required: ['swagger', 'info', 'paths'],
  additionalProperties: false,
  patternProperties: extensions,
  definitions: { items: swaggerItems, parameter: swaggerParameter, response: swaggerResponse },
  properties: {
    swagger: { enum: ['2.0', 2] },
    info,
    host: { type: 'string' },
    basePath: { type: 'string', pattern: '^/' },
    schemes: { type: 'array', items: { enum: ['http', 'https', 'ws', 'wss'] } },
    consumes: stringArray,
    produces: stringArray,
    paths: paths(pathItem(swaggerOperation, { $ref: '#/definitions/parameter' }, {})),
    definitions: { type: 'object', additionalProperties: anySchema },
    parameters: { type: 'object', additionalProperties: { $ref: '#/definitions/parameter' } },
    responses: { type: 'object', additionalProperties: { $ref: '#/definitions/response' } },
    securityDefinitions: { type: 'object', additionalProperties: swaggerSecurityScheme },
    security: securityRequirements,
    tags,
    externalDocs,
  },
};

// ── OpenAPI 3.0 / 3.1 ────────────────────────────────────────────────────────────────────
const mediaTypes: JSONSchema = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      schema: anySchema,
      example: {},
      examples: { type: 'object' },
      encoding: { type: 'object' },
    },
  },
};

const oasParameter: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['name', 'in'],
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      name: { type: 'string', minLength: 1 },
      in: { enum: ['query', 'header', 'path', 'cookie'] },
      description: { type: 'string' },
      required: { type: 'boolean' },
      deprecated: { type: 'boolean' },
      allowEmptyValue: { type: 'boolean' },
      style: { type: 'string' },
      explode: { type: 'boolean' },
      allowReserved: { type: 'boolean' },
      schema: anySchema,
      content: mediaTypes,
      example: {},
      examples: { type: 'object' },
    },
    // OpenAPI 3 §Parameter Object: path parameters are required.
    if: { properties: { in: { const: 'path' } } },
    then: { required: ['required'], properties: { required: { const: true } } },
  },
};

const oasRequestBody: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['content'],
    additionalProperties: false,
    patternProperties: extensions,
    properties: { description: { type: 'string' }, content: mediaTypes, required: { type: 'boolean' } },
  },
};

const oasResponse: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['description'],
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      description: { type: 'string' },
      headers: { type: 'object' },
      content: mediaTypes,
      links: { type: 'object' },
    },
  },
};

function oasOperation(responsesRequired: boolean): JSONSchema {
  return {
    type: 'object',
    required: responsesRequired ? ['responses'] : [],
    additionalProperties: false,
    patternProperties: extensions,
    properties: {
      tags: stringArray,
      summary: { type: 'string' },
      description: { type: 'string' },
      externalDocs,
      operationId: { type: 'string', minLength: 1 },
      parameters: { type: 'array', items: { $ref: '#/definitions/parameter' } },
      requestBody: { $ref: '#/definitions/requestBody' },
      responses: { type: 'object', additionalProperties: { $ref: '#/definitions/response' } },
      callbacks: { type: 'object' },
      deprecated: { type: 'boolean' },
      security: securityRequirements,
      servers: { type: 'array' },
    },
  };
}

const server: JSONSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  patternProperties: extensions,
  properties: {
    url: { type: 'string' },
    description: { type: 'string' },
    variables: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['default'],
        properties: { default: { type: 'string' }, enum: stringArray, description: { type: 'string' } },
      },
    },
  },
};

const oasSecurityScheme: JSONSchema = {
  type: 'object',
  if: hasRef,
  then: refOnly,
  else: {
    required: ['type'],
    properties: {
      type: { enum: ['apiKey', 'http', 'oauth2', 'openIdConnect'] },
      description: { type: 'string' },
      name: { type: 'string' },
      in: { enum: ['header', 'query', 'cookie'] },
      scheme: { type: 'string' },
      bearerFormat: { type: 'string' },
      flows: { type: 'object' },
      openIdConnectUrl: { type: 'string' },
    },
    allOf: [
      { if: { properties: { type: { const: 'apiKey' } } }, then: { required: ['name', 'in'] } },
      { if: { properties: { type: { const: 'http' } } }, then: { required: ['scheme'] } },
    ],
  },
};

/** OpenAPI 3.0 (`minor` '0') or 3.1 (`minor` '1'). */
function openApiSchema(minor: '0' | '1'): JSONSchema {
  const item = pathItem(
    oasOperation(minor === '0'),
    { $ref: '#/definitions/parameter' },
    {
      summary: { type: 'string' },
      description: { type: 'string' },
      servers: { type: 'array', items: server },
      trace: oasOperation(minor === '0'),
    },
  );
  return {
    type: 'object',
    required: minor === '0' ? ['openapi', 'info', 'paths'] : ['openapi', 'info'],
    additionalProperties: false,
    patternProperties: extensions,
    definitions: { parameter: oasParameter, requestBody: oasRequestBody, response: oasResponse },
    properties: {
      openapi: { type: 'string', pattern: `^3\\.${minor}\\.\\d+$` },
      info,
      servers: { type: 'array', items: server },
      paths: paths(item),
      components: {
        type: 'object',
        additionalProperties: false,
        patternProperties: extensions,
        properties: {
          schemas: { type: 'object', additionalProperties: anySchema },
          responses: { type: 'object', additionalProperties: { $ref: '#/definitions/response' } },
          parameters: { type: 'object', additionalProperties: { $ref: '#/definitions/parameter' } },
          examples: { type: 'object' },
          requestBodies: { type: 'object', additionalProperties: { $ref: '#/definitions/requestBody' } },
          headers: { type: 'object' },
          securitySchemes: { type: 'object', additionalProperties: oasSecurityScheme },
          links: { type: 'object' },
          callbacks: { type: 'object' },
          pathItems: { type: 'object' },
        },
      },
      security: securityRequirements,
      tags,
      externalDocs,
      ...(minor === '1' ? { webhooks: { type: 'object' }, jsonSchemaDialect: { type: 'string' } } : {}),
    },
  };
}

export const openApi30Schema: JSONSchema = openApiSchema('0');
export const openApi31Schema: JSONSchema = openApiSchema('1');

// ── x-ibm-configuration ──────────────────────────────────────────────────────────────────
const contentLevel: JSONSchema = { enum: ['none', 'activity', 'header', 'payload'] };
const propertyValue: JSONSchema = { type: ['string', 'number', 'boolean'] };

const wsdlDefinition: JSONSchema = {
  type: 'object',
  required: ['wsdl'],
  properties: {
    wsdl: { type: 'string' },
    service: { type: 'string' },
    port: { type: 'string' },
    'soap-version': { enum: ['1.1', '1.2'] },
  },
};

const target: JSONSchema = {
  type: 'object',
  description: 'A target service: a sub-document generated from a WSDL, with its own paths and definitions.',
  properties: {
    'x-ibm-configuration': {
      type: 'object',
      properties: {
        type: { enum: ['wsdl', 'rest'] },
        'wsdl-definition': wsdlDefinition,
      },
    },
    paths: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          properties: {
            operationId: { type: 'string' },
            'x-ibm-soap': {
              type: 'object',
              properties: { 'soap-action': { type: 'string' }, 'soap-operation': { type: 'string' } },
            },
          },
        },
      },
    },
    definitions: { type: 'object', additionalProperties: anySchema },
  },
};

/** `x-ibm-configuration` as API Connect v5 and v10 write it. */
export const ibmConfigurationSchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enforced: { type: 'boolean' },
    testable: { type: 'boolean' },
    phase: { enum: ['identified', 'specified', 'realized'] },
    cors: { type: 'object', additionalProperties: false, properties: { enabled: { type: 'boolean' } } },
    gateway: { enum: ['datapower-gateway', 'datapower-api-gateway', 'micro-gateway'] },
    type: { enum: ['rest', 'wsdl', 'graphql'] },
    buffering: { type: 'boolean' },
    'activity-log': {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        'success-content': contentLevel,
        'error-content': contentLevel,
      },
    },
    properties: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { value: propertyValue, description: { type: 'string' }, encoded: { type: 'boolean' } },
      },
    },
    catalogs: {
      type: 'object',
      additionalProperties: {
        type: ['object', 'null'],
        additionalProperties: false,
        properties: { properties: { type: 'object', additionalProperties: propertyValue } },
      },
    },
    'application-authentication': {
      type: 'object',
      additionalProperties: false,
      properties: { certificate: { type: 'boolean' } },
    },
    compatibility: { type: 'object', additionalProperties: { type: ['boolean', 'string', 'number'] } },
    'wsdl-definition': wsdlDefinition,
    targets: { type: 'object', additionalProperties: target },
    categories: stringArray,
    extensions: { type: 'object' },
    assembly: {
      type: 'object',
      required: ['execute'],
      additionalProperties: false,
      properties: {
        execute: { type: 'array', items: { type: 'object' } },
        catch: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            anyOf: [{ required: ['errors', 'execute'] }, { required: ['default'] }],
            properties: {
              errors: { type: 'array', minItems: 1, items: { type: 'string' } },
              execute: { type: 'array', items: { type: 'object' } },
              default: { type: 'array', items: { type: 'object' } },
            },
          },
        },
        finally: { type: 'array', items: { type: 'object' } },
      },
    },
  },
};
