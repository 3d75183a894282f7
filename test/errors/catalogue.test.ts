import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DefinitionError, PorticoError, errorCatalogue, errorEnvelope, formatMessage } from '../../src/errors.ts';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('every error code of the catalogue is documented in docs/errors.md', () => {
  const missing = Object.keys(errorCatalogue).filter((code) => !doc.includes(`\`${code}\``));
  assert.deepEqual(missing, []);
});

test('docs/errors.md names no code the catalogue lacks', () => {
  const documented = [...doc.matchAll(/`([A-Z]+_[A-Z_]+)`/g)].map((m) => m[1]);
  const unknown = documented.filter((code) => !code.startsWith('PORTICO_') && !(code in errorCatalogue));
  assert.deepEqual(unknown, []);
});

test('messages fill their placeholders and keep unknown ones visible', () => {
  assert.equal(formatMessage('{a} and {b}', { a: 1 }), '1 and {b}');
  const error = new PorticoError('MGMT_NOT_FOUND', { kind: 'API', id: 'x:1' });
  assert.equal(error.status, 404);
  assert.deepEqual(error.toJSON(), {
    error: { code: 'MGMT_NOT_FOUND', message: 'API x:1 not found', kind: 'API', id: 'x:1' },
  });
});

test('a definition error carries every problem with file, path and rule', () => {
  const error = new DefinitionError('a.yaml', [
    { path: '$.info.version', rule: 'required', reason: 'is required' },
    { path: '$.paths', rule: 'required', reason: 'is required' },
  ]);
  assert.equal(error.code, 'DEF_INVALID');
  assert.equal(error.message, 'a.yaml: $.info.version: is required (and 1 more problem)');
  assert.equal((error.toJSON().error.problems as unknown[]).length, 2);
});

test('the consumer envelope has a string httpCode, as API Connect writes it', () => {
  assert.deepEqual(errorEnvelope(429, 'Rate Limit exceeded'), {
    httpCode: '429',
    httpMessage: 'Too Many Requests',
    moreInformation: 'Rate Limit exceeded',
  });
});
