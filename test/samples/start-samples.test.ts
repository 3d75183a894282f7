import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
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

test('a malformed HTTP request gets a 400 and the server keeps serving', async () => {
  const samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  try {
    const { port } = new URL(samples.urls.shipping);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(reply, /^HTTP\/1\.1 400/);
    const response = await fetch(`${samples.endpoints.shipping}?company=cek&from_zip=90210&to_zip=90210`);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  } finally {
    await samples.close();
  }
});
