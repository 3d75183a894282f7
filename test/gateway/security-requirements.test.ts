/**
 * OpenAPI's requirement semantics through a real gateway (issue 12 finding 1): OR of
 * alternatives, AND inside one, `{}` = open, an operation's `security` replaces the document's;
 * the security phase runs before parameters are checked; and (finding 13) a client id's answer
 * does not tell a valid id from an invalid one unless a secret proved ownership.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { clientIdScheme, clientSecretScheme, secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { SecurityPlatform, TestApp } from '../helpers/security-api.ts';

const schemes = {
  id: clientIdScheme,
  secret: clientSecretScheme,
  queryId: { type: 'apiKey', in: 'query', name: 'client_id' },
};

interface Answer {
  status: number;
  body: string;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.text() };
}

const served: Answer = { status: 200, body: 'served' };
const invalid: Answer = {
  status: 401,
  body: JSON.stringify({
    httpCode: '401',
    httpMessage: 'Unauthorized',
    moreInformation: 'Invalid client id or secret.',
  }),
};

describe('security requirements: OR of AND, {} open, operation replaces document', () => {
  let p: SecurityPlatform;
  let app: TestApp;
  before(async () => {
    p = await startSecurityPlatform();
    await p.publish(
      secApi({
        schemes,
        security: [{ id: [] }],
        operations: {
          '/inherits': {},
          '/and': { security: [{ id: [], secret: [] }] },
          '/or': { security: [{ id: [], secret: [] }, { queryId: [] }] },
          '/optional': { security: [{}, { id: [] }] },
          '/none': { security: [] },
        },
      }),
    );
    app = await p.newApp('default');
  });
  after(async () => {
    await p.close();
  });

  test("an operation without its own security takes the document's client id", async () => {
    assert.deepEqual(await get(`${p.base}/inherits?n=1`), invalid);
    assert.deepEqual(await get(`${p.base}/inherits?n=1`, { 'X-IBM-Client-Id': app.clientId }), served);
  });

  test('the schemes of one requirement must all hold (AND)', async () => {
    assert.deepEqual(await get(`${p.base}/and?n=1`, { 'X-IBM-Client-Id': app.clientId }), invalid);
    assert.deepEqual(
      await get(`${p.base}/and?n=1`, { 'X-IBM-Client-Id': app.clientId, 'X-IBM-Client-Secret': 'wrong' }),
      invalid,
    );
    assert.deepEqual(
      await get(`${p.base}/and?n=1`, {
        'X-IBM-Client-Id': app.clientId,
        'X-IBM-Client-Secret': app.clientSecret,
      }),
      served,
    );
  });

  test('any one requirement of the list is enough (OR)', async () => {
    assert.deepEqual(await get(`${p.base}/or?n=1`), invalid);
    assert.deepEqual(
      await get(`${p.base}/or?n=1`, {
        'X-IBM-Client-Id': app.clientId,
        'X-IBM-Client-Secret': app.clientSecret,
      }),
      served,
    );
    assert.deepEqual(await get(`${p.base}/or?n=1&client_id=${app.clientId}`), served);
    // The header id alone satisfies neither alternative.
    assert.deepEqual(await get(`${p.base}/or?n=1`, { 'X-IBM-Client-Id': app.clientId }), invalid);
  });

  test('{} as one alternative lets anonymous callers in', async () => {
    assert.deepEqual(await get(`${p.base}/optional?n=1`), served);
    assert.deepEqual(await get(`${p.base}/optional?n=1`, { 'X-IBM-Client-Id': app.clientId }), served);
  });

  test("an operation's security: [] replaces the document's requirement", async () => {
    assert.deepEqual(await get(`${p.base}/none?n=1`), served);
  });

  test('an unauthenticated caller gets 401, not the parameter rules (400)', async () => {
    assert.deepEqual(await get(`${p.base}/inherits`), invalid);
    assert.deepEqual(await get(`${p.base}/inherits?n=lots`), invalid);
    const identified = await get(`${p.base}/inherits?n=lots`, { 'X-IBM-Client-Id': app.clientId });
    assert.equal(identified.status, 400);
  });
});

describe('client id answers do not tell a valid id from an invalid one', () => {
  let p: SecurityPlatform;
  let unsubscribed: TestApp;
  let pending: TestApp;
  before(async () => {
    p = await startSecurityPlatform();
    await p.publish(
      secApi({
        schemes,
        security: [{ id: [] }],
        operations: { '/id': {}, '/secret': { security: [{ id: [], secret: [] }] } },
      }),
    );
    unsubscribed = await p.newApp();
    pending = await p.newApp('gold');
  });
  after(async () => {
    await p.close();
  });

  test('unknown, unsubscribed and pending client ids get the same answer', async () => {
    const answers = await Promise.all(
      ['f'.repeat(32), unsubscribed.clientId, pending.clientId].map((id) =>
        get(`${p.base}/id?n=1`, { 'X-IBM-Client-Id': id }),
      ),
    );
    assert.deepEqual(answers, [invalid, invalid, invalid]);
  });

  test('without the right secret, the same answer again', async () => {
    for (const app of [unsubscribed, pending]) {
      assert.deepEqual(
        await get(`${p.base}/secret?n=1`, {
          'X-IBM-Client-Id': app.clientId,
          'X-IBM-Client-Secret': 'wrong',
        }),
        invalid,
      );
    }
    assert.deepEqual(
      await get(`${p.base}/secret?n=1`, {
        'X-IBM-Client-Id': 'f'.repeat(32),
        'X-IBM-Client-Secret': 'wrong',
      }),
      invalid,
    );
  });

  test('a caller who proved ownership with the secret learns why it is refused', async () => {
    const none = await get(`${p.base}/secret?n=1`, {
      'X-IBM-Client-Id': unsubscribed.clientId,
      'X-IBM-Client-Secret': unsubscribed.clientSecret,
    });
    assert.equal(none.status, 401);
    assert.match(
      JSON.parse(none.body).moreInformation,
      /is not subscribed to a plan that contains this API \(no subscription\)/,
    );
    const waiting = await get(`${p.base}/secret?n=1`, {
      'X-IBM-Client-Id': pending.clientId,
      'X-IBM-Client-Secret': pending.clientSecret,
    });
    assert.equal(waiting.status, 401);
    assert.match(JSON.parse(waiting.body).moreInformation, /pending approval/);
  });
});
