/** Example values generated from schemas (src/web/examples.ts): what API pages and code samples show. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exampleFor } from '../../src/web/examples.ts';

test('a documented example, default, const or enum wins over a generated value', () => {
  assert.equal(exampleFor({ type: 'string', example: 'given' }), 'given');
  assert.equal(exampleFor({ type: 'integer', examples: [7, 8] }), 7);
  assert.equal(exampleFor({ type: 'string', default: 'fallback' }), 'fallback');
  assert.equal(exampleFor({ const: 'fixed' }), 'fixed');
  assert.equal(exampleFor({ type: 'string', enum: ['north', 'south'] }), 'north');
});

test('strings follow format, the property name and min/max length', () => {
  assert.equal(exampleFor({ type: 'string', format: 'date-time' }), '2024-01-15T09:30:00Z');
  assert.equal(exampleFor({ type: 'string', format: 'date' }), '2024-01-15');
  assert.equal(exampleFor({ type: 'string', format: 'email' }), 'developer@example.com');
  assert.equal(exampleFor({ type: 'string', format: 'uuid' }), '3fa85f64-5717-4562-b3fc-2c963f66afa6');
  assert.equal(exampleFor({ type: 'string', format: 'uri' }), 'https://example.com/resource');
  assert.equal(exampleFor({ type: 'string' }, { name: 'city' }), 'example city');
  assert.equal(exampleFor({ type: 'string', maxLength: 3 }, { name: 'code' }), 'exa');
  assert.equal(exampleFor({ type: 'string', minLength: 10 }), 'examplexxx');
});

test('numbers stay inside minimum/maximum, exclusive bounds and multipleOf', () => {
  assert.equal(exampleFor({ type: 'integer' }), 1);
  assert.equal(exampleFor({ type: 'number' }), 9.99);
  assert.equal(exampleFor({ type: 'integer', minimum: 0, maximum: 500 }), 250);
  assert.equal(exampleFor({ type: 'number', minimum: 0, maximum: 5 }), 2.5);
  assert.equal(exampleFor({ type: 'integer', minimum: 10 }), 10);
  assert.equal(exampleFor({ type: 'integer', maximum: -3 }), -3);
  assert.equal(exampleFor({ type: 'integer', minimum: 1, exclusiveMinimum: true }), 2);
  assert.equal(exampleFor({ type: 'integer', exclusiveMaximum: 0 }), -1);
  assert.equal(exampleFor({ type: 'integer', minimum: 7, multipleOf: 5 }), 10);
  assert.equal(exampleFor({ type: ['null', 'boolean'] }), true);
});

test('objects and arrays nest; arrays honour minItems and maxItems', () => {
  const schema = {
    type: 'object',
    properties: {
      tags: { type: 'array', minItems: 2, items: { type: 'string', enum: ['a', 'b'] } },
      none: { type: 'array', maxItems: 0, items: { type: 'string' } },
      owner: { properties: { id: { type: 'integer', minimum: 100, maximum: 200 } } },
      matrix: { type: 'array', items: { type: 'array', items: { type: 'boolean' } } },
    },
  };
  assert.deepEqual(exampleFor(schema), { tags: ['a', 'a'], none: [], owner: { id: 150 }, matrix: [[true]] });
});

test('local $refs are followed and a recursive one stops where it repeats', () => {
  const root = {
    definitions: {
      Node: {
        type: 'object',
        properties: { name: { type: 'string' }, child: { $ref: '#/definitions/Node' } },
      },
      Pair: {
        allOf: [{ $ref: '#/definitions/Node' }, { properties: { weight: { type: 'number', minimum: 1, maximum: 2 } } }],
      },
    },
  };
  assert.deepEqual(exampleFor({ $ref: '#/definitions/Node' }, { root }), { name: 'example name' });
  assert.deepEqual(exampleFor({ $ref: '#/definitions/Pair' }, { root }), {
    name: 'example name',
    weight: 1.5,
  });
  assert.equal(exampleFor({ $ref: '#/definitions/Missing' }, { root }), undefined);
});

test('the same schema always gives the same value', () => {
  const schema = {
    type: 'object',
    properties: { at: { type: 'string', format: 'date-time' }, n: { type: 'number' } },
  };
  assert.deepEqual(exampleFor(schema), exampleFor(structuredClone(schema)));
  assert.equal(JSON.stringify(exampleFor(schema)), '{"at":"2024-01-15T09:30:00Z","n":9.99}');
});
