import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startShippingService } from '../../samples/shipping-service.ts';
import type { RunningSample } from '../../samples/http-server.ts';

let service: RunningSample;
before(async () => {
  service = await startShippingService({ port: 0 });
});
after(() => service.close());

function quote(query: string): Promise<Response> {
  return fetch(`${service.url}/shipping/calculate?${query}`);
}

async function rates(company: string, toZip: string): Promise<unknown> {
  const response = await quote(`company=${company}&from_zip=90210&to_zip=${toZip}`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return response.json();
}

describe('shipping rates', () => {
  // Figures of the original stub (api-connect-notes §3).
  const expected: [string, string, Record<string, string>][] = [
    ['xyz', '90210', { next_day: '37.71', two_day: '25.80', ground: '19.85' }],
    ['cek', '90210', { next_day: '34.28', two_day: '23.45', ground: '18.04' }],
    ['xyz', '10001', { next_day: '20.94', two_day: '14.33', ground: '11.02' }],
    ['cek', '10001', { next_day: '19.04', two_day: '13.03', ground: '10.02' }],
  ];
  for (const [company, toZip, expectedRates] of expected) {
    test(`${company} from 90210 to ${toZip}`, async () => {
      assert.deepEqual(await rates(company, toZip), { company, rates: expectedRates });
    });
  }

  test('zip codes with leading zeros keep their value', async () => {
    // (90210 + 1001) / 10000 = 9.1211 → ground 9.12 for cek.
    const body = (await rates('cek', '01001')) as { rates: { ground: string } };
    assert.equal(body.rates.ground, '9.12');
  });
});

describe('shipping errors', () => {
  const bad: [string, string, RegExp][] = [
    ['unknown company', 'company=abc&from_zip=90210&to_zip=10001', /unknown company "abc"/],
    ['missing company', 'from_zip=90210&to_zip=10001', /company is required/],
    ['missing to_zip', 'company=xyz&from_zip=90210', /to_zip is required/],
    ['missing from_zip', 'company=xyz&to_zip=90210', /from_zip is required/],
    ['non-numeric zip', 'company=xyz&from_zip=90210&to_zip=abcde', /to_zip must be a 5-digit zip code/],
    ['short zip', 'company=xyz&from_zip=9021&to_zip=10001', /from_zip must be a 5-digit zip code/],
    ['zip with trailing text', 'company=cek&from_zip=90210&to_zip=10001x', /to_zip must be a 5-digit/],
  ];
  for (const [name, query, message] of bad) {
    test(`${name} gives 400 with an error message`, async () => {
      const response = await quote(query);
      assert.equal(response.status, 400);
      const body = (await response.json()) as { error: string };
      assert.match(body.error, message);
    });
  }

  test('POST gets 405 and an unknown path 404', async () => {
    const post = await fetch(`${service.url}/shipping/calculate`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    await post.arrayBuffer();
    const missing = await fetch(`${service.url}/shipping`);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
  });
});

describe('shipping schema', () => {
  test('GET /shipping/schema returns the draft-04 schema of the vendor reply', async () => {
    const response = await fetch(`${service.url}/shipping/schema`);
    assert.equal(response.status, 200);
    const schema = (await response.json()) as {
      $schema: string;
      required: string[];
      properties: { rates: { properties: Record<string, { type: string }> } };
    };
    assert.equal(schema.$schema, 'http://json-schema.org/draft-04/schema#');
    assert.deepEqual(schema.required, ['company', 'rates']);
    assert.deepEqual(Object.keys(schema.properties.rates.properties), ['next_day', 'two_day', 'ground']);
  });

  test('every reply satisfies the schema', async () => {
    const body = (await rates('xyz', '10001')) as { company: unknown; rates: Record<string, unknown> };
    assert.equal(typeof body.company, 'string');
    for (const key of ['next_day', 'two_day', 'ground']) assert.match(String(body.rates[key]), /^\d+\.\d{2}$/);
  });
});
