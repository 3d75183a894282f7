import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SEED_ITEMS, startInventoryService } from '../../samples/inventory-service.ts';
import type { Item } from '../../samples/inventory-service.ts';
import type { RunningSample } from '../../samples/http-server.ts';

// A fresh service per test: each starts from the seed items.
let service: RunningSample;
beforeEach(async () => {
  service = await startInventoryService({ port: 0 });
});
afterEach(() => service.close());

const newItem = {
  name: 'Punch Card Holder',
  description: 'A desk tray for eighty-column cards.',
  img: 'images/items/card-holder.jpg',
  img_alt: 'Card holder',
  price: 19.99,
  rating: 4,
};

function send(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${service.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function json<T>(response: Response, status: number): Promise<T> {
  assert.equal(response.status, status);
  return (await response.json()) as T;
}

describe('inventory CRUD', () => {
  test('lists the seeded items', async () => {
    const items = await json<Item[]>(await send('GET', '/api/items'), 200);
    assert.ok(items.length >= 6);
    assert.deepEqual(items, SEED_ITEMS);
    for (const item of items)
      assert.deepEqual(Object.keys(item).sort(), ['description', 'id', 'img', 'img_alt', 'name', 'price', 'rating']);
  });

  test('reads one item by id', async () => {
    const item = await json<Item>(await send('GET', '/api/items/2'), 200);
    assert.equal(item.name, SEED_ITEMS[1].name);
  });

  test('creates, reads, replaces and deletes an item', async () => {
    const created = await json<Item>(await send('POST', '/api/items', newItem), 200);
    assert.equal(created.id, SEED_ITEMS.length + 1);
    assert.deepEqual({ ...created, id: undefined }, { ...newItem, id: undefined });

    assert.deepEqual(await json<Item>(await send('GET', `/api/items/${created.id}`), 200), created);

    const replacement = { ...newItem, price: 24.5, rating: 5 };
    const replaced = await json<Item>(await send('PUT', `/api/items/${created.id}`, replacement), 200);
    assert.deepEqual(replaced, { ...replacement, id: created.id });
    assert.equal((await json<Item>(await send('GET', `/api/items/${created.id}`), 200)).price, 24.5);

    assert.deepEqual(await json(await send('DELETE', `/api/items/${created.id}`), 200), { count: 1 });
    await json(await send('GET', `/api/items/${created.id}`), 404);
    const remaining = await json<Item[]>(await send('GET', '/api/items'), 200);
    assert.equal(remaining.length, SEED_ITEMS.length);
  });

  test('the LoopBack spelling /api/Items works too', async () => {
    const item = await json<Item>(await send('GET', '/api/Items/1'), 200);
    assert.equal(item.id, 1);
  });

  test('img_alt defaults to the name and rating to 0', async () => {
    const { name, description, img, price } = newItem;
    const created = await json<Item>(await send('POST', '/api/items', { name, description, img, price }), 200);
    assert.equal(created.img_alt, name);
    assert.equal(created.rating, 0);
  });
});

describe('inventory errors', () => {
  const invalid: [string, unknown, RegExp][] = [
    ['missing name', { ...newItem, name: undefined }, /`name` can't be blank/],
    ['price as a string', { ...newItem, price: '19.99' }, /`price` must be a number/],
    ['negative price', { ...newItem, price: -1 }, /`price` must not be negative/],
    ['rating above 5', { ...newItem, rating: 6 }, /`rating` must be between 0 and 5/],
    ['unknown property', { ...newItem, colour: 'blue' }, /Unknown property `colour`/],
    ['an array', [newItem], /must be a JSON object/],
  ];
  for (const [name, body, message] of invalid) {
    test(`${name} is a 400 validation error`, async () => {
      const reply = await json<{ error: { statusCode: number; name: string; message: string } }>(
        await send('POST', '/api/items', body),
        400,
      );
      assert.equal(reply.error.statusCode, 400);
      assert.equal(reply.error.name, 'ValidationError');
      assert.match(reply.error.message, message);
    });
  }

  test('malformed JSON is a 400', async () => {
    const reply = await json<{ error: { name: string } }>(await send('POST', '/api/items', '{"name":'), 400);
    assert.equal(reply.error.name, 'SyntaxError');
  });

  test('a non-JSON content type is a 415', async () => {
    const response = await fetch(`${service.url}/api/items`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    await json(response, 415);
  });

  test('a body over the limit is a 413', async () => {
    await json(await send('POST', '/api/items', { ...newItem, description: 'x'.repeat(70 * 1024) }), 413);
  });

  test('unknown ids are 404 on GET, PUT and DELETE', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const reply = await json<{ error: { message: string } }>(
        await send(method, '/api/items/999', method === 'PUT' ? newItem : undefined),
        404,
      );
      assert.match(reply.error.message, /Unknown "Item" id "999"/);
    }
  });

  test('a non-numeric id is a 400', async () => {
    await json(await send('GET', '/api/items/abc'), 400);
  });

  test('creating with a taken id is a 409', async () => {
    await json(await send('POST', '/api/items', { ...newItem, id: 1 }), 409);
  });

  test('replacing with a different id in the body is a 400', async () => {
    await json(await send('PUT', '/api/items/1', { ...newItem, id: 2 }), 400);
  });

  test('PATCH is a 405 with Allow, unknown paths 404', async () => {
    const patch = await send('PATCH', '/api/items/1', newItem);
    assert.equal(patch.headers.get('allow'), 'GET, HEAD, PUT, DELETE');
    await json(patch, 405);
    await json(await send('GET', '/api/other'), 404);
  });
});
