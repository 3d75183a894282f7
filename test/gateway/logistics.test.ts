import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import zipcodes from '../helpers/zipcodes.ts';
import { startTestDemo } from '../helpers/demo.ts';
import type { TestDemo } from '../helpers/demo.ts';

describe('the logistics flow of the spec (§4.2, §4.3) through the real gateway', () => {
  let t: TestDemo;
  let headers: Record<string, string>;
  before(async () => {
    t = await startTestDemo();
    headers = { 'X-IBM-Client-Id': t.handle.clientId };
  });
  after(async () => {
    await t.close();
  });

  test('GET /shipping?zip=90210 consolidates both vendors into the rates of the original service', async () => {
    const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(await response.json(), {
      xyz: { next_day: '37.71', two_day: '25.80', ground: '19.85' },
      cek: { next_day: '34.28', two_day: '23.45', ground: '18.04' },
    });
  });

  test('GET /shipping?zip=10001 gives the other sample figures', async () => {
    const body = (await (await fetch(`${t.base}/logistics/shipping?zip=10001`, { headers })).json()) as Record<
      string,
      Record<string, string>
    >;
    assert.deepEqual(body.xyz, { next_day: '20.94', two_day: '14.33', ground: '11.02' });
    assert.deepEqual(body.cek, { next_day: '19.04', two_day: '13.03', ground: '10.02' });
  });

  test("GET /stores?zip=90210 answers the maps link built from the geocoder's first result", async () => {
    const response = await fetch(`${t.base}/logistics/stores?zip=90210`, { headers });
    assert.equal(response.status, 200);
    const place = zipcodes.lookup('90210')!;
    assert.deepEqual(await response.json(), {
      maps_link: `https://www.google.com/maps?q=${place.latitude},${place.longitude}`,
    });
  });

  test("the response carries a transaction id and not the request's own headers", async () => {
    const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
    assert.match(response.headers.get('x-global-transaction-id') ?? '', /^[0-9a-f]{16}$/);
    assert.equal(response.headers.get('x-ibm-client-id'), null);
    assert.equal(response.headers.get('host'), null);
  });

  test('a missing zip is a 400 before any backend is called', async () => {
    const response = await fetch(`${t.base}/logistics/shipping`, { headers });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      httpCode: '400',
      httpMessage: 'Bad Request',
      moreInformation: 'One or more required API parameters are missing in the API request. Missing: zip (query)',
    });
  });

  test("with a vendor down, stop-on-error unchecked lets the flow go on: the other vendor's rates come back", async () => {
    const services = t.handle.platform.services;
    const original = (await services.api(t.orgId, 'logistics', '2.0.0')).document;
    // Only vendor xyz goes to a closed port; cek keeps the live service.
    const down = original.replace(
      '$(shipping_svc_url)?company=xyz',
      'http://127.0.0.1:1/shipping/calculate?company=xyz',
    );
    assert.notEqual(down, original);
    await services.importApi(t.orgId, { text: down, file: 'logistics.json', replace: true });
    await t.handle.platform.gateway!.reload();
    try {
      const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), {
        cek: { next_day: '34.28', two_day: '23.45', ground: '18.04' },
      });
    } finally {
      await services.importApi(t.orgId, { text: original, file: 'logistics.json', replace: true });
      await t.handle.platform.gateway!.reload();
    }
    const restored = await fetch(`${t.base}/logistics/shipping?zip=90210`, { headers });
    assert.equal(((await restored.json()) as { xyz?: unknown }).xyz !== undefined, true);
  });

  test("an unknown zip at the geocoder gives the script's defined 404 answer", async () => {
    const response = await fetch(`${t.base}/logistics/stores?zip=00000`, { headers });
    assert.equal(response.status, 404);
    const body = (await response.json()) as { httpCode: string; moreInformation: string };
    assert.equal(body.httpCode, '404');
    assert.match(body.moreInformation, /No location found/i);
  });
});

describe('responses built by the assembly itself', () => {
  let t: TestDemo;
  before(async () => {
    t = await startTestDemo();
  });
  after(async () => {
    await t.close();
  });

  test("do not echo the request's headers back", async () => {
    const response = await fetch(`${t.base}/logistics/shipping?zip=90210`, {
      headers: {
        'X-IBM-Client-Id': t.handle.clientId,
        'Sec-Fetch-Mode': 'cors',
        'X-Trace-Me': 'abc',
        DNT: '1',
      },
    });
    assert.equal(response.status, 200);
    for (const name of ['sec-fetch-mode', 'x-trace-me', 'dnt', 'x-ibm-client-id', 'user-agent'])
      assert.equal(response.headers.get(name), null, name);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
  });
});
