/**
 * Issue 12 finding 1: no security scheme type or option is served open. Every scheme type and
 * option docs/definitions.md lists is either enforced (a call without credentials gets 401, one
 * with them 200) or refused: a definition error at import, and — for a document that reached
 * the store without import — a 500 GW_SECURITY_UNSUPPORTED from the gateway, credentials or not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseApiDocument as parseDocument } from '../../src/definitions/index.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { DefinitionError } from '../../src/errors.ts';
import { clientIdScheme, clientSecretScheme, secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { Doc, SecurityPlatform, TestApp } from '../helpers/security-api.ts';

/** The API document parser with the policies' assembly check, as the management plane runs it. */
const parseApiDocument = (text: string, file: string) => parseDocument(text, file, assemblyProblems);

type Send = (app: TestApp) => { headers?: Record<string, string>; query?: string };

interface Case {
  name: string;
  document: Doc;
  /** Enforced: how a subscribed app sends its credentials. */
  send?: Send;
  /** Refused: the [JSON path, rule] import reports. */
  refused?: [string, string];
  /** Further [path, rule] pairs import reports for the same document. */
  alsoRefused?: Array<[string, string]>;
}

const byHeader: Send = (app) => ({ headers: { 'X-IBM-Client-Id': app.clientId } });
const oauthFlow = {
  type: 'oauth2',
  flow: 'implicit',
  authorizationUrl: 'https://idp.example/authorize',
  scopes: { read: 'read' },
};
const oasFlows = {
  type: 'oauth2',
  flows: { clientCredentials: { tokenUrl: 'https://idp.example/token', scopes: {} } },
};
const one = (schemes: Doc, openapi?: '2.0' | '3.0.3' | '3.1.0') => secApi({ openapi, schemes, security: [{ s: [] }] });
const at = '$.security[0].s';

const cases: Case[] = [
  { name: 'apiKey X-IBM-Client-Id in a header', document: one({ s: clientIdScheme }), send: byHeader },
  {
    name: 'apiKey client_id in the query',
    document: one({ s: { type: 'apiKey', in: 'query', name: 'client_id' } }),
    send: (app) => ({ query: `client_id=${app.clientId}` }),
  },
  {
    name: 'apiKey client-id header (any case)',
    document: one({ s: { type: 'apiKey', in: 'header', name: 'Client-ID' } }),
    send: (app) => ({ headers: { 'client-id': app.clientId } }),
  },
  {
    name: 'apiKey with x-key-type client_id under another name',
    document: one({ s: { type: 'apiKey', in: 'header', name: 'X-App-Key', 'x-key-type': 'client_id' } }),
    send: (app) => ({ headers: { 'X-App-Key': app.clientId } }),
  },
  {
    name: 'client id and client secret (OpenAPI 3.0)',
    document: secApi({
      openapi: '3.0.3',
      schemes: { id: clientIdScheme, secret: clientSecretScheme },
      security: [{ id: [], secret: [] }],
    }),
    send: (app) => ({
      headers: { 'X-IBM-Client-Id': app.clientId, 'X-IBM-Client-Secret': app.clientSecret },
    }),
  },
  {
    name: 'apiKey client secret alone',
    document: one({ s: clientSecretScheme }),
    refused: ['$.security[0]', 'security-requirement'],
  },
  {
    name: 'apiKey with a name that carries no role',
    document: one({ s: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } }),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'apiKey with an unknown x-key-type',
    document: one({ s: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id', 'x-key-type': 'token' } }),
    refused: [at, 'unsupported-security'],
  },
  {
    name: "apiKey whose x-key-type names an Object.prototype member ('constructor')",
    document: one({ s: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id', 'x-key-type': 'constructor' } }),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'apiKey in a cookie (OpenAPI 3)',
    document: one({ s: { type: 'apiKey', in: 'cookie', name: 'client_id' } }, '3.0.3'),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'basic (Swagger 2.0)',
    document: one({ s: { type: 'basic' } }),
    refused: [at, 'unsupported-security'],
  },
  { name: 'oauth2 (Swagger 2.0)', document: one({ s: oauthFlow }), refused: [at, 'unsupported-security'] },
  {
    name: 'oauth2 flows (OpenAPI 3)',
    document: one({ s: oasFlows }, '3.0.3'),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'http basic (OpenAPI 3)',
    document: one({ s: { type: 'http', scheme: 'basic' } }, '3.0.3'),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'http bearer (OpenAPI 3)',
    document: one({ s: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }, '3.0.3'),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'http digest (OpenAPI 3)',
    document: one({ s: { type: 'http', scheme: 'digest' } }, '3.0.3'),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'openIdConnect (OpenAPI 3)',
    document: one(
      {
        s: {
          type: 'openIdConnect',
          openIdConnectUrl: 'https://idp.example/.well-known/openid-configuration',
        },
      },
      '3.0.3',
    ),
    refused: [at, 'unsupported-security'],
  },
  // The structure schema knows no mutualTLS type: its enum rule refuses it too.
  {
    name: 'mutualTLS (OpenAPI 3.1)',
    document: one({ s: { type: 'mutualTLS' } }, '3.1.0'),
    refused: [at, 'unsupported-security'],
    alsoRefused: [['$.components.securitySchemes.s.type', 'enum']],
  },
  {
    name: 'an apiKey requirement with roles (OpenAPI 3.1)',
    document: secApi({ openapi: '3.1.0', schemes: { s: clientIdScheme }, security: [{ s: ['admin'] }] }),
    refused: [at, 'unsupported-security'],
  },
  {
    name: 'two client ids in one requirement',
    document: secApi({
      schemes: { s: clientIdScheme, q: { type: 'apiKey', in: 'query', name: 'client_id' } },
      security: [{ s: [], q: [] }],
    }),
    refused: ['$.security[0]', 'security-requirement'],
  },
  {
    name: 'an undeclared scheme',
    document: secApi({ schemes: { s: clientIdScheme }, security: [{ nope: [] }] }),
    refused: ['$.security[0].nope', 'unknown-security-scheme'],
  },
  {
    name: 'application-authentication with a client certificate',
    document: secApi({
      schemes: { s: clientIdScheme },
      security: [{ s: [] }],
      ibm: { 'application-authentication': { certificate: true } },
    }),
    refused: ['$.x-ibm-configuration.application-authentication.certificate', 'unsupported-security'],
  },
  {
    name: 'an operation-level oauth2 replacing a document-level client id',
    document: secApi({
      schemes: { s: clientIdScheme, o: oauthFlow },
      security: [{ s: [] }],
      operations: { '/thing': { security: [{ o: [] }] } },
    }),
    refused: ["$.paths['/thing'].get.security[0].o", 'unsupported-security'],
  },
  {
    name: 'oauth2 as one alternative next to a client id',
    document: secApi({ schemes: { s: clientIdScheme, o: oauthFlow }, security: [{ o: [] }, { s: [] }] }),
    refused: ['$.security[0].o', 'unsupported-security'],
  },
  {
    name: 'basic as one alternative next to {} (open)',
    document: secApi({ schemes: { b: { type: 'basic' } }, security: [{ b: [] }, {}] }),
    refused: ['$.security[0].b', 'unsupported-security'],
  },
];

function importProblems(document: Doc): Array<[string, string]> | 'accepted' {
  try {
    parseApiDocument(JSON.stringify(document), 'sec.json');
    return 'accepted';
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    return error.problems.map((problem) => [problem.path, problem.rule]);
  }
}

async function call(
  p: SecurityPlatform,
  request: { headers?: Record<string, string>; query?: string } = {},
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${p.base}/thing?n=1${request.query ? `&${request.query}` : ''}`, {
    headers: request.headers,
  });
  return { status: response.status, body: await response.text() };
}

describe('every security scheme type and option is enforced or refused', () => {
  let p: SecurityPlatform;
  let app: TestApp;
  before(async () => {
    p = await startSecurityPlatform();
    await p.publish(secApi({ schemes: { s: clientIdScheme }, security: [{ s: [] }] }));
    app = await p.newApp('default');
  });
  after(async () => {
    await p.close();
  });

  for (const c of cases) {
    test(`${c.name}: ${c.send ? 'enforced' : 'refused at import'}`, () => {
      const problems = importProblems(c.document);
      if (c.send) assert.equal(problems, 'accepted');
      else assert.deepEqual(problems, [...(c.alsoRefused ?? []), c.refused]);
    });

    test(`${c.name}: stored without import, never served open`, async () => {
      await p.store(c.document);
      const anonymous = await call(p);
      if (c.send) {
        assert.equal(anonymous.status, 401, anonymous.body);
        const identified = await call(p, c.send(app));
        assert.deepEqual(identified, { status: 200, body: 'served' });
        return;
      }
      const everything = {
        headers: {
          'X-IBM-Client-Id': app.clientId,
          'X-IBM-Client-Secret': app.clientSecret,
          Authorization: 'Bearer x',
        },
      };
      for (const answer of [anonymous, await call(p, everything)]) {
        assert.equal(answer.status, 500, answer.body);
        const envelope = JSON.parse(answer.body) as { httpCode: string; moreInformation: string };
        assert.equal(envelope.httpCode, '500');
        assert.match(
          envelope.moreInformation,
          /^This operation is refused: its security cannot be enforced by the gateway$/,
        );
      }
    });
  }

  test('a product naming an API stored with unenforceable security is refused at publish', async () => {
    await p.store(one({ s: oauthFlow }));
    const services = p.t.platform.services;
    await services.setProductState(p.t.orgId, 'sandbox', 'sec', '1.0.0', 'deprecated');
    await assert.rejects(
      services.setProductState(p.t.orgId, 'sandbox', 'sec', '1.0.0', 'published'),
      (error: DefinitionError) => {
        assert.equal(error.code, 'DEF_INVALID');
        assert.deepEqual(
          error.problems.map((problem) => [problem.path, problem.rule]),
          [[at, 'unsupported-security']],
        );
        assert.match(
          error.message,
          /^sec:1\.0\.0: \$\.security\[0\]\.s: security scheme s: oauth2 is not supported yet/,
        );
        return true;
      },
    );
  });
});
