import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startGeocoderService } from '../../samples/geocoder-service.ts';
import type { GeocodeResponse } from '../../samples/geocoder-service.ts';
import type { RunningSample } from '../../samples/http-server.ts';

// The package itself is the reference: the service must answer what zipcodes says.
const zipcodes = createRequire(import.meta.url)('zipcodes') as {
  lookup(zip: string): { latitude: number; longitude: number; city: string; state: string };
};

let service: RunningSample;
before(async () => {
  service = await startGeocoderService({ port: 0 });
});
after(() => service.close());

async function geocode(query: string): Promise<{ status: number; body: GeocodeResponse }> {
  const response = await fetch(`${service.url}/maps/api/geocode/json${query}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  return { status: response.status, body: (await response.json()) as GeocodeResponse };
}

describe('geocoder', () => {
  test('90210 is Beverly Hills at the zipcodes coordinates', async () => {
    const { status, body } = await geocode('?address=90210');
    assert.equal(status, 200);
    assert.equal(body.status, 'OK');
    assert.equal(body.results.length, 1);
    const [result] = body.results;
    assert.equal(result.formatted_address, 'Beverly Hills, CA 90210, USA');
    const reference = zipcodes.lookup('90210');
    assert.deepEqual(result.geometry.location, { lat: reference.latitude, lng: reference.longitude });
    assert.equal(result.geometry.location_type, 'APPROXIMATE');
    // Beverly Hills lies around 34.09 N, 118.41 W.
    assert.ok(Math.abs(result.geometry.location.lat - 34.09) < 0.05);
    assert.ok(Math.abs(result.geometry.location.lng + 118.41) < 0.05);
    assert.deepEqual(result.types, ['postal_code']);
    assert.ok(result.place_id.length > 0);
  });

  test('address components name the zip, city, state and country', async () => {
    const { body } = await geocode('?address=90210');
    const byType = (type: string) => body.results[0].address_components.find((c) => c.types.includes(type));
    assert.equal(byType('postal_code')?.long_name, '90210');
    assert.equal(byType('locality')?.long_name, 'Beverly Hills');
    assert.deepEqual(
      [byType('administrative_area_level_1')?.long_name, byType('administrative_area_level_1')?.short_name],
      ['California', 'CA'],
    );
    assert.equal(byType('country')?.short_name, 'US');
  });

  test('10001 is New York at the zipcodes coordinates', async () => {
    const { body } = await geocode('?address=10001');
    assert.equal(body.status, 'OK');
    const reference = zipcodes.lookup('10001');
    assert.equal(body.results[0].formatted_address, 'New York, NY 10001, USA');
    assert.deepEqual(body.results[0].geometry.location, {
      lat: reference.latitude,
      lng: reference.longitude,
    });
  });

  test('the original ?&address= form is understood', async () => {
    const { body } = await geocode('?&address=90210');
    assert.equal(body.status, 'OK');
    assert.equal(body.results[0].formatted_address, 'Beverly Hills, CA 90210, USA');
  });

  test('a ZIP+4 code is looked up by its first five digits', async () => {
    const { body } = await geocode('?address=90210-1234');
    assert.equal(body.results[0].address_components[0].long_name, '90210');
  });

  for (const address of ['00000', '99999', 'abcde', '9021', 'M5V']) {
    test(`unknown or malformed address ${address} gives ZERO_RESULTS with 200`, async () => {
      const { status, body } = await geocode(`?address=${address}`);
      assert.equal(status, 200);
      assert.deepEqual(body, { status: 'ZERO_RESULTS', results: [] });
    });
  }

  for (const query of ['', '?address=', '?&address=%20']) {
    test(`missing address (${query || 'no query'}) gives INVALID_REQUEST with 400`, async () => {
      const { status, body } = await geocode(query);
      assert.equal(status, 400);
      assert.equal(body.status, 'INVALID_REQUEST');
      assert.deepEqual(body.results, []);
      assert.match(body.error_message ?? '', /address/);
    });
  }

  test('POST gets 405 with Allow and an unknown path 404', async () => {
    const post = await fetch(`${service.url}/maps/api/geocode/json?address=90210`, {
      method: 'POST',
      body: '{}',
    });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.arrayBuffer();
    const missing = await fetch(`${service.url}/maps/api/geocode/xml`);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
  });
});
