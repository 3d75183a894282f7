/**
 * Structural schema of an API Connect product document (`product: 1.0.0`), as the IBM
 * toolkit writes it ("An example YAML representation of a Product"), plus the v5 plan form
 * `rate-limit:` (one limit) that older products use.
 */
import type { JSONSchema } from './json-schema.ts';

const stringArray: JSONSchema = { type: 'array', items: { type: 'string' } };

function audience(types: string[], defaultType: string, description: string): JSONSchema {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    properties: {
      type: { enum: types, default: defaultType, description: 'Who the product is offered to.' },
      enabled: { type: 'boolean', default: true, description: 'Whether this audience setting applies.' },
      orgs: { ...stringArray, default: [], description: 'Consumer organisations (type custom).' },
      tags: { ...stringArray, default: [], description: 'Consumer group tags (type custom).' },
    },
  };
}

const rateLimit: JSONSchema = {
  type: 'object',
  required: ['value'],
  additionalProperties: false,
  properties: {
    value: {
      type: 'string',
      description: '<count>/<n><unit> (second, minute, hour, day, week) or unlimited.',
    },
    'hard-limit': {
      type: 'boolean',
      default: false,
      description: 'Reject calls over the limit (429) rather than only logging them.',
    },
  },
};

const plan: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  patternProperties: { '^x-': {} },
  properties: {
    title: { type: 'string', description: 'Name shown in the portal; default the plan key.' },
    description: { type: 'string' },
    approval: { type: 'boolean', default: false, description: 'Subscriptions wait for provider approval.' },
    'rate-limits': {
      type: 'object',
      additionalProperties: rateLimit,
      description: 'Named limits shared by all operations of the plan.',
    },
    'rate-limit': rateLimit,
    'burst-limits': {
      type: 'object',
      additionalProperties: rateLimit,
      description: 'Named burst limits; always hard.',
    },
    'assembly-rate-limits': {
      type: 'object',
      additionalProperties: { anyOf: [rateLimit, { type: 'array', items: rateLimit }] },
      description: 'Named limits an assembly `ratelimit` policy (source plan-named) consumes.',
    },
    'assembly-burst-limits': {
      type: 'object',
      additionalProperties: { anyOf: [rateLimit, { type: 'array', items: rateLimit }] },
      description: 'Named burst limits for an assembly `ratelimit` policy; always hard.',
    },
    apis: {
      type: 'object',
      description:
        'APIs (by product apis key) the plan covers; absent = all. `operations` is refused (plan-operations).',
      additionalProperties: {
        type: ['object', 'null'],
        properties: { operations: { type: 'array', items: { type: 'object' } } },
      },
    },
  },
};

/** A product document. */
export const productSchema: JSONSchema = {
  type: 'object',
  required: ['product', 'info', 'plans'],
  additionalProperties: false,
  patternProperties: { '^x-': {} },
  properties: {
    product: { enum: ['1.0.0'] },
    info: {
      type: 'object',
      required: ['name', 'version'],
      additionalProperties: false,
      patternProperties: { '^x-': {} },
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' },
        title: { type: 'string' },
        version: { type: 'string', minLength: 1 },
        description: { type: 'string' },
        summary: { type: 'string' },
        termsOfService: { type: 'string' },
        categories: stringArray,
        contact: {
          type: 'object',
          additionalProperties: false,
          properties: { name: { type: 'string' }, email: { type: 'string' }, url: { type: 'string' } },
        },
        license: {
          type: 'object',
          additionalProperties: false,
          properties: { name: { type: 'string' }, url: { type: 'string' } },
        },
      },
    },
    gateways: {
      type: 'array',
      items: { enum: ['datapower-gateway', 'datapower-api-gateway', 'micro-gateway'] },
    },
    visibility: {
      type: 'object',
      additionalProperties: false,
      properties: {
        view: audience(['public', 'authenticated', 'custom'], 'public', 'Who sees the product in the portal.'),
        subscribe: audience(['authenticated', 'custom'], 'authenticated', 'Who may subscribe to its plans.'),
      },
    },
    plans: { type: 'object', minProperties: 1, additionalProperties: plan },
    apis: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        anyOf: [{ required: ['name'] }, { required: ['$ref'] }],
        properties: {
          name: { type: 'string', description: 'name:version of a published API, e.g. financing:1.0.0.' },
          $ref: { type: 'string', description: 'File of the API document, relative to the product file.' },
        },
      },
    },
  },
};
