/**
 * The routing phase on its own (issue 17): `/org/catalog` split, catalog and API lookup,
 * template matching, 404 and 405 as coded errors, without a listener.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PorticoError, errorEnvelope } from '../../../src/errors.ts';
import { apiRoutes, requestTarget, isStatusPath, routeRequest } from '../../../src/gateway/router.ts';
import type { CompiledOperation } from '../../../src/gateway/snapshot.ts';
import { shopSnapshot } from './fixture.ts';

const { catalogs } = await shopSnapshot();

function refusal(run: () => unknown): PorticoError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof PorticoError, `not a PorticoError: ${String(error)}`);
    return error;
  }
  assert.fail('no error was thrown');
}

describe('router phase', () => {
  test('splits /org/catalog off the path and finds the API and operation', () => {
    const route = routeRequest(catalogs, 'GET', '/acme/sandbox/shop/items');
    assert.ok('api' in route);
    assert.equal(route.api.name, 'shop');
    assert.equal(route.operation.id, 'listItems');
    assert.equal(route.path, '/shop/items');
    assert.deepEqual(route.pathParams, {});
  });

  test('matches a template and decodes its value; a literal path wins over a template', () => {
    const item = routeRequest(catalogs, 'GET', '/acme/sandbox/shop/items/a%20b');
    assert.ok('api' in item);
    assert.equal(item.operation.id, 'getItem');
    assert.deepEqual(item.pathParams, { id: 'a b' });
    const count = routeRequest(catalogs, 'GET', '/acme/sandbox/shop/items/count');
    assert.ok('api' in count);
    assert.equal(count.operation.id, 'countItems');
  });

  test('HEAD is answered by the GET operation; a trailing slash matches', () => {
    const head = routeRequest(catalogs, 'HEAD', '/acme/sandbox/shop/items/');
    assert.ok('api' in head);
    assert.equal(head.operation.id, 'listItems');
  });

  for (const [what, path] of [
    ['an unknown org', '/nobody/sandbox/shop/items'],
    ['an unknown catalog', '/acme/production/shop/items'],
    ['an unknown API', '/acme/sandbox/warehouse/items'],
    ['an unknown path of a known API', '/acme/sandbox/shop/orders'],
    ['a base path continued without a slash', '/acme/sandbox/shopping/items'],
  ]) {
    test(`${what} is a 404 in the API Connect envelope`, () => {
      const error = refusal(() => routeRequest(catalogs, 'GET', path));
      assert.equal(error.code, 'GW_NOT_FOUND');
      assert.deepEqual(errorEnvelope(error.status, error.message), {
        httpCode: '404',
        httpMessage: 'Not Found',
        moreInformation: 'No resources match requested URI',
      });
    });
  }

  test('a known path without the verb is a 405 carrying Allow', () => {
    const error = refusal(() => routeRequest(catalogs, 'PUT', '/acme/sandbox/shop/items/7'));
    assert.equal(error.code, 'GW_METHOD_NOT_ALLOWED');
    assert.equal(error.status, 405);
    assert.equal(error.message, 'The method PUT is not allowed for the requested URI');
    assert.deepEqual(error.headers, { Allow: 'GET, DELETE' });
  });

  test('a CORS preflight to such a path gets the verbs instead of a 405', () => {
    assert.deepEqual(routeRequest(catalogs, 'OPTIONS', '/acme/sandbox/shop/items', true), {
      preflight: ['GET', 'POST'],
      path: '/shop/items',
    });
  });

  test('the request target: path and query split; a dot segment or backslash, even encoded, is a 400', () => {
    assert.deepEqual(requestTarget('/acme/sandbox/shop/items?limit=2'), {
      pathname: '/acme/sandbox/shop/items',
      search: '?limit=2',
    });
    for (const url of ['/acme/sandbox/shop/../admin', '/acme/sandbox/shop/%2e%2e/admin', '/acme/sandbox/shop\\x']) {
      assert.equal(refusal(() => requestTarget(url)).code, 'GW_INVALID_PATH', url);
    }
  });

  test('one-segment paths are the node status paths, never APIs', () => {
    assert.equal(isStatusPath('/ready'), true);
    assert.equal(isStatusPath('/acme/sandbox'), false);
  });

  test('values sharing a segment match as before, in time linear in a hostile path', () => {
    const operation = { path: '/dates/{y}-{m}-{d}', verb: 'GET' } as CompiledOperation;
    const [route] = apiRoutes([operation]).templateRoutes;
    assert.deepEqual([...(route.pattern.exec('/dates/2024-01-02/') ?? [])], ['/dates/2024-01-02/', '2024', '01', '02']);
    // The first value takes the most it can, as V8's backtracking did: a-b | c | d.
    assert.deepEqual([...(route.pattern.exec('/dates/a-b-c-d') ?? [])].slice(1), ['a-b', 'c', 'd']);
    assert.equal(route.pattern.exec('/dates/2024-01'), null);
    // Cubic on the backtracking engine: 1,600 dashes took 1.2 s, 16,000 would take ~20 minutes.
    // On the linear engine the test ends; a regression hangs the file rather than failing a timer.
    assert.equal(route.pattern.exec(`/dates/${'-'.repeat(16_000)}/x`), null);
  });
});
