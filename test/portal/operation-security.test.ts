/**
 * The credentials sentence of an API page, from the gateway's own reading of a document's
 * security: alternatives joined by "or", `{}` as an open alternative, an operation's `security`
 * replacing the document's, and a requirement the gateway cannot enforce shown as refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialsText, operationSecurity } from '../../src/portal/operation-security.ts';
import type { SecurityNames } from '../../src/portal/operation-security.ts';

const names: SecurityNames = { registries: new Map([['people', 'People']]), providers: new Map() };

function doc(security: unknown, operationSecurity?: unknown): Record<string, unknown> {
  const get: Record<string, unknown> = { responses: { 200: { description: 'ok' } } };
  if (operationSecurity !== undefined) get.security = operationSecurity;
  return {
    swagger: '2.0',
    info: { title: 'T', version: '1.0.0' },
    securityDefinitions: {
      id: { type: 'apiKey', in: 'query', name: 'client_id' },
      people: { type: 'basic', 'x-ibm-authentication-registry': 'people' },
      oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://id.example/.well-known/openid-configuration' },
    },
    security,
    paths: { '/x': { get } },
  };
}

function text(document: Record<string, unknown>): string {
  return credentialsText(operationSecurity(document, 'GET', '/x'), document, names);
}

test('alternatives read "or", schemes of one alternative "and", registries by title', () => {
  assert.equal(
    text(doc([{ id: [] }, { id: [], people: [] }])),
    'Requires: client id in query parameter client_id; or client id in query parameter client_id and ' +
      'HTTP basic user name and password (Authorization header) of user registry People.',
  );
});

test('a {} alternative is said to be open', () => {
  assert.equal(
    text(doc([{ id: [] }, {}])),
    'Requires: client id in query parameter client_id; or no credentials at all (open to anonymous callers).',
  );
});

test("an operation's security replaces the document's, [] included", () => {
  assert.equal(text(doc([{ id: [] }], [])), 'Requires: no credentials (open to anonymous callers).');
  assert.match(text(doc([], [{ people: [] }])), /^Requires: HTTP basic/);
});

test('a requirement the gateway cannot enforce is shown as refused, never as open', () => {
  assert.match(text(doc([{ oidc: [] }, {}])), /^Not callable: the gateway refuses every call .*openIdConnect/);
});
