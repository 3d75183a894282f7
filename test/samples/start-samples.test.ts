import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { DEFAULT_SAMPLE_PORTS, startSamples } from '../../samples/index.ts';

test('startSamples starts all four backends and closes them with one call', async () => {
  const samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  const ports = Object.values(samples.urls).map((url) => new URL(url).port);
  assert.equal(new Set(ports).size, 4);
  const checks = [
    fetch(samples.endpoints.financingWsdl),
    fetch(`${samples.endpoints.shipping}?company=xyz&from_zip=90210&to_zip=90210`),
    fetch(`${samples.endpoints.geocoder}?address=90210`),
    fetch(`${samples.endpoints.inventory}/api/items`),
  ];
  for (const response of await Promise.all(checks)) {
    assert.equal(response.status, 200, response.url);
    await response.arrayBuffer();
  }
  await samples.close();
  await assert.rejects(fetch(`${samples.endpoints.inventory}/api/items`));
});

test('when one port is taken, startSamples fails and leaves nothing running', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const taken = (blocker.address() as { port: number }).port;
  try {
    await assert.rejects(startSamples({ financing: 0, shipping: taken, geocoder: 0, inventory: 0 }), /EADDRINUSE/);
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});

test('the default ports are the ones the example definitions use', () => {
  assert.deepEqual({ ...DEFAULT_SAMPLE_PORTS }, { financing: 9081, shipping: 9082, geocoder: 9083, inventory: 9084 });
});
