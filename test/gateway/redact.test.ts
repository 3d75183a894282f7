/**
 * The redact policy on a real platform: an API Connect document with `redact` blocks is imported,
 * published and called through the gateway against a real backend. The backend receives the
 * request body redacted, the consumer the response body redacted (re-serialised as JSON with a
 * matching length), XML content is refused with RedactionError (and a catch can take it), and a
 * block outside the supported form is refused at import with its path, rule and reason.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const stars = '******';

const account = {
  user: 'ann',
  password: 'backend-secret',
  profile: { settings: { password: 'nested-secret', theme: 'dark' } },
  cards: [
    { type: 'visa', number: '4111111111111111', cvv: '123' },
    { type: 'amex', number: '378282246310005', cvv: '4567' },
  ],
};

/** `/echo` answers what it received (body, length, the header x-secret); `/account` answers the account above. */
const backend = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    const answer =
      req.url === '/account'
        ? account
        : {
            body: text === '' ? null : (JSON.parse(text) as unknown),
            bytes: Buffer.byteLength(text),
            contentLength: req.headers['content-length'] ?? null,
            secretHeader: req.headers['x-secret'] ?? null,
          };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
});

/** The API; `caught` adds a catch that answers RedactionError with 422 (the other API has none). */
function apiText(target: string, name: string, caught: boolean): string {
  const invoke = (path: string) => `
                - invoke:
                    version: 2.0.0
                    title: invoke
                    target-url: '${target}${path}'
                    verb: keep`;
  return `swagger: '2.0'
info:
  title: ${name}
  x-ibm-name: ${name}
  version: 1.0.0
basePath: /${name}
security: []
paths:
  /request-root: {post: {operationId: request-root, responses: {'200': {description: OK}}}}
  /request-context: {post: {operationId: request-context, responses: {'200': {description: OK}}}}
  /response: {get: {operationId: response, responses: {'200': {description: OK}}}}
  /xml: {post: {operationId: xml, responses: {'200': {description: OK}}}}
x-ibm-configuration:
  gateway: datapower-api-gateway
  assembly:
    execute:
      - operation-switch:
          version: 2.0.0
          case:
            - operations: [request-root]
              execute:
                - redact:
                    version: 2.0.0
                    title: redact-request
                    root: message.body
                    redactions:
                      - action: remove
                        path: '**.password'
                      - action: redact
                        path: "cards[type='visa'].number"
                      - action: remove
                        path: 'cards[1]'
${invoke('/echo')}
            - operations: [request-context]
              execute:
                - redact:
                    version: 2.0.0
                    redactions:
                      - path: message.body.card.number
                      - action: remove
                        path: message.headers.\`X-Secret\`
${invoke('/echo')}
            - operations: [response]
              execute:
${invoke('/account')}
                - redact:
                    version: 2.0.0
                    title: redact-response
                    root: message.body
                    redactions:
                      - path: '**.password'
                      - path: "cards[type='visa'].number"
                      - action: remove
                        path: $.cards.cvv
            - operations: [xml]
              execute:
                - redact:
                    version: 2.0.0
                    root: message.body
                    redactions:
                      - path: card.number
${invoke('/echo')}
${caught ? catchBlock : ''}`;
}

const catchBlock = `    catch:
      - errors: [RedactionError]
        execute:
          - set-variable:
              version: 2.0.0
              actions:
                - set: message.status.code
                  value: 422
                  type: number
                - set: message.body
                  value: caught RedactionError
                - set: message.headers.content-type
                  value: text/plain
`;

const productText = `product: 1.0.0
info: {name: accounts-product, title: Accounts, version: 1.0.0}
plans: {default: {title: Default}}
apis: {accounts: {name: 'accounts:1.0.0'}, caught: {name: 'accounts-caught:1.0.0'}}
`;

describe('redact through the gateway', () => {
  let t: TestPlatform;
  let base: string;
  before(async () => {
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    t = await startTestPlatform({ role: 'all' });
    const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    for (const [name, caught] of [
      ['accounts', false],
      ['accounts-caught', true],
    ] as const)
      await t.platform.services.importApi(t.orgId, {
        text: apiText(target, name, caught),
        file: `${name}.yaml`,
        state: 'online',
      });
    await t.platform.services.putProduct(t.orgId, 'sandbox', {
      text: productText,
      file: 'accounts-product.yaml',
      state: 'published',
    });
    await t.platform.gateway!.reload();
    base = `${t.gateway}/acme/sandbox/accounts`;
  });
  after(async () => {
    await t?.close();
    backend.closeAllConnections();
    await new Promise((resolve) => backend.close(resolve));
  });

  async function post(path: string, body: string, headers: Record<string, string> = {}) {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  test('before invoke, with root message.body: the backend receives the request body redacted', async () => {
    const sent = { user: 'ann', password: 'p', nested: { deep: [{ password: 'q' }] }, cards: account.cards };
    const answer = await post('/request-root', JSON.stringify(sent));
    assert.equal(answer.status, 200, answer.text);
    const received = JSON.parse(answer.text) as { body: unknown; bytes: number; contentLength: string };
    assert.deepEqual(received.body, {
      user: 'ann',
      nested: { deep: [{}] },
      cards: [{ type: 'visa', number: stars, cvv: '123' }],
    });
    assert.equal(Number(received.contentLength), received.bytes, 'the length sent is the redacted body');
  });

  test('root omitted: a context path redacts the body and removes a header before invoke', async () => {
    const answer = await post('/request-context', JSON.stringify({ card: { number: '4111', name: 'Ann' } }), {
      'x-secret': 'do-not-forward',
    });
    assert.equal(answer.status, 200, answer.text);
    const received = JSON.parse(answer.text) as { body: unknown; secretHeader: string | null };
    assert.deepEqual(received.body, { card: { number: stars, name: 'Ann' } });
    assert.equal(received.secretHeader, null);
  });

  test('after invoke: the consumer gets the response body redacted, as JSON of its own length', async () => {
    const response = await fetch(`${base}/response`);
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(Number(response.headers.get('content-length')), Buffer.byteLength(text));
    assert.deepEqual(JSON.parse(text), {
      user: 'ann',
      password: stars,
      profile: { settings: { password: stars, theme: 'dark' } },
      cards: [
        { type: 'visa', number: stars },
        { type: 'amex', number: '378282246310005' },
      ],
    });
    assert.equal(text.includes('secret'), false);
  });

  test('an XML body is never passed on unredacted: RedactionError, 500', async () => {
    const xml = '<card><number>4111111111111111</number></card>';
    const response = await fetch(`${base}/xml`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: xml,
    });
    const text = await response.text();
    assert.equal(response.status, 500, text);
    const envelope = JSON.parse(text) as { httpCode: string; moreInformation: string };
    assert.equal(envelope.httpCode, '500');
    assert.match(envelope.moreInformation, /XML/);
    assert.equal(text.includes('4111'), false);
  });

  test('a catch block naming RedactionError takes it', async () => {
    const response = await fetch(`${base}-caught/xml`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<card><number>4111</number></card>',
    });
    assert.equal(response.status, 422);
    assert.equal(await response.text(), 'caught RedactionError');
  });

  const at = '$.x-ibm-configuration.assembly.execute[0].redact';
  const refusals: Array<[string, string, string, string, RegExp]> = [
    [
      'version 1.0.0, the v5 XPath form',
      `{version: 1.0.0, actions: [{action: redact, from: [all], path: '//card/number'}]}`,
      `${at}.version`,
      'unsupported-version',
      /v5 compatible/,
    ],
    [
      'a path outside the location-path subset',
      `{version: 2.0.0, root: message.body, redactions: [{path: '$uppercase(card.number)'}]}`,
      `${at}.redactions[0].path`,
      'redact-path',
      /location path/,
    ],
    [
      'a path that does not parse',
      `{version: 2.0.0, root: message.body, redactions: [{path: 'cards[type='}]}`,
      `${at}.redactions[0].path`,
      'redact-path',
      /not valid JSONata/,
    ],
  ];
  for (const [index, [what, block, path, rule, reason]] of refusals.entries()) {
    test(`import refuses ${what}, naming the path, the rule and why`, async () => {
      const document = `swagger: '2.0'
info: {title: refused${index}, x-ibm-name: refused${index}, version: 1.0.0}
basePath: /refused${index}
paths: {/x: {get: {responses: {'200': {description: OK}}}}}
x-ibm-configuration:
  assembly:
    execute:
      - redact: ${block}
`;
      const answer = await t.call('POST', '/api/apis', { document, file: 'refused.yaml' });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      const problems = answer.body.error.problems as Array<{ path: string; rule: string; reason: string }>;
      assert.deepEqual(
        problems.map((p) => [p.path, p.rule]),
        [[path, rule]],
      );
      assert.match(problems[0].reason, reason);
    });
  }
});
