import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

async function envelope(
  response: Response,
): Promise<{ httpCode: string; httpMessage: string; moreInformation: string }> {
  assert.match(response.headers.get('content-type') ?? '', /application\/json/);
  return (await response.json()) as { httpCode: string; httpMessage: string; moreInformation: string };
}

describe('gateway security, routing and consumer errors', () => {
  let t: TestDemo;
  before(async () => {
    t = await startTestDemo();
  });
  after(async () => {
    await t.close();
  });

  test('returns 401 on a missing or unknown client id', async () => {
    const attempts: Array<Record<string, string>> = [{}, { 'X-IBM-Client-Id': 'f'.repeat(32) }];
    for (const headers of attempts) {
      const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
      assert.equal(response.status, 401);
      assert.deepEqual(await envelope(response), {
        httpCode: '401',
        httpMessage: 'Unauthorized',
        moreInformation: 'Invalid client id or secret.',
      });
    }
  });

  test('accepts the client id in the query when the API declares it there', async () => {
    const services = t.handle.platform.services;
    const original = (await services.api(t.orgId, 'logistics', '2.0.0')).document;
    const query = original.replace('"in":"header","name":"X-IBM-Client-Id"', '"in":"query","name":"client_id"');
    assert.notEqual(query, original);
    await services.importApi(t.orgId, { text: query, file: 'logistics.json', replace: true });
    await t.handle.platform.gateway!.reload();
    try {
      assert.equal((await fetch(`${t.base}/logistics/shipping?zip=90210&client_id=${t.handle.clientId}`)).status, 200);
      assert.equal(
        (
          await fetch(`${t.base}/logistics/shipping?zip=90210`, {
            headers: { 'X-IBM-Client-Id': t.handle.clientId },
          })
        ).status,
        401,
      );
    } finally {
      await services.importApi(t.orgId, { text: original, file: 'logistics.json', replace: true });
      await t.handle.platform.gateway!.reload();
    }
  });

  test('checks the client secret where the API asks for one: wrong → 401, right → 200', async () => {
    const services = t.handle.platform.services;
    const original = (await services.api(t.orgId, 'logistics', '2.0.0')).document;
    const doc = JSON.parse(original);
    doc.securityDefinitions.clientSecret = { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Secret' };
    doc.security = [{ clientID: [], clientSecret: [] }];
    await services.importApi(t.orgId, { text: JSON.stringify(doc), file: 'logistics.json', replace: true });
    const app = await t.newApp('silver');
    try {
      const url = `${t.base}/logistics/shipping?zip=90210`;
      assert.equal((await fetch(url, { headers: { 'X-IBM-Client-Id': app.clientId } })).status, 401);
      assert.equal(
        (await fetch(url, { headers: { 'X-IBM-Client-Id': app.clientId, 'X-IBM-Client-Secret': 'wrong' } })).status,
        401,
      );
      assert.equal(
        (
          await fetch(url, {
            headers: { 'X-IBM-Client-Id': app.clientId, 'X-IBM-Client-Secret': app.clientSecret },
          })
        ).status,
        200,
      );
    } finally {
      await services.importApi(t.orgId, { text: original, file: 'logistics.json', replace: true });
      await t.handle.platform.gateway!.reload();
    }
  });

  test('returns 401 while a Gold subscription awaits approval, 200 once approved, 401 once revoked', async () => {
    const app = await t.newApp('gold', { approve: false });
    const url = `${t.base}/logistics/shipping?zip=90210`;
    const headers = { 'X-IBM-Client-Id': app.clientId };
    const pending = await fetch(url, { headers });
    assert.equal(pending.status, 401);
    // No secret proved the caller owns the id: the answer is the one an unknown id gets.
    assert.equal((await envelope(pending)).moreInformation, 'Invalid client id or secret.');
    const services = t.handle.platform.services;
    await services.decideSubscription(t.orgId, 'sandbox', app.subscriptionId, 'approve');
    await t.handle.platform.gateway!.reload();
    assert.equal((await fetch(url, { headers })).status, 200);
    await services.revokeSubscription(t.orgId, 'sandbox', app.subscriptionId);
    await t.handle.platform.gateway!.reload();
    assert.equal((await fetch(url, { headers })).status, 401);
  });

  test('an app subscribed to another product gets 401 on this one', async () => {
    const app = await t.newApp('default', { product: 'inventory' });
    const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, {
      headers: { 'X-IBM-Client-Id': app.clientId },
    });
    assert.equal(response.status, 401);
    assert.equal((await fetch(`${t.base}/api/items`, { headers: { 'X-IBM-Client-Id': app.clientId } })).status, 200);
  });

  test('returns 404 for an unknown catalog, API or path, and 405 with Allow for a wrong method', async () => {
    const headers = { 'X-IBM-Client-Id': t.handle.clientId };
    for (const path of [
      '/demo/nowhere/logistics/shipping',
      '/nope',
      '/demo/sandbox/nothing/here',
      '/demo/sandbox/logistics/unknown',
    ]) {
      const response = await fetch(`${t.handle.platform.urls.gateway}${path}`, { headers });
      assert.equal(response.status, 404, path);
      assert.deepEqual(await envelope(response), {
        httpCode: '404',
        httpMessage: 'Not Found',
        moreInformation: 'No resources match requested URI',
      });
    }
    const wrong = await fetch(`${t.base}/logistics/shipping?zip=90210`, { method: 'DELETE', headers });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
  });

  test('returns 400 for a parameter of the wrong type, before the backend is called', async () => {
    const headers = { 'X-IBM-Client-Id': t.handle.clientId };
    const response = await fetch(`${t.base}/financing/calculate?amount=lots&duration=36&rate=5`, { headers });
    assert.equal(response.status, 400);
    assert.match((await envelope(response)).moreInformation, /amount \(query\) is invalid: expected a number/);
    const fraction = await fetch(`${t.base}/financing/calculate?amount=1&duration=3.5&rate=5`, { headers });
    assert.equal(fraction.status, 400);
  });

  test('returns 400 when a required body is missing, before the backend is called', async () => {
    const response = await fetch(`${t.base}/api/items`, {
      method: 'POST',
      headers: { 'X-IBM-Client-Id': t.handle.clientId, 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.match((await envelope(response)).moreInformation, /Missing: body \(body\)/);
  });

  test('returns 413 for a body over the limit', async () => {
    const headers = { 'X-IBM-Client-Id': t.handle.clientId, 'content-type': 'application/json' };
    const big = JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024) });
    const response = await fetch(`${t.base}/api/items`, { method: 'POST', headers, body: big });
    assert.equal(response.status, 413);
    assert.equal((await envelope(response)).httpCode, '413');
  });

  test('a consumer value cannot change the backend host, path or parameters', async () => {
    const headers = { 'X-IBM-Client-Id': t.handle.clientId };
    // zip flows into `to_zip={zip}`: an attempt to add a parameter is encoded, so the vendor sees one bad zip.
    const response = await fetch(`${t.base}/logistics/shipping?zip=${encodeURIComponent('90210&company=evil')}`, {
      headers,
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    // Sent raw, `&company=evil` would have left `to_zip=90210` valid and rates would come back.
    assert.equal(text.includes('next_day'), false, `the vendors refused the encoded zip: ${text}`);
  });

  test('answers a CORS preflight when the API enables CORS', async () => {
    const response = await fetch(`${t.base}/logistics/shipping`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://portal.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'X-IBM-Client-Id',
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'http://portal.example');
    assert.equal(response.headers.get('access-control-allow-methods'), 'GET');
  });
});
