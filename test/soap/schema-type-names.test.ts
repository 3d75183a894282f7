import assert from 'node:assert/strict';
import { test } from 'node:test';
import { schemaTypeNamed } from '../../src/soap/xml-schema-node.ts';

test('schema type names: OpenAPI formats read as JSON types, any case', () => {
  assert.equal(schemaTypeNamed('float'), 'number');
  assert.equal(schemaTypeNamed('INT64'), 'integer');
  assert.equal(schemaTypeNamed('string'), 'string');
});

test("a document's type naming an Object.prototype member names no type", () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    assert.equal(schemaTypeNamed(name), undefined, name);
  }
});
