/**
 * Review finding: the consumer may not choose the backend host however the template spells the
 * value (`message.*`, bracket notation) or however many values make up the host. Each bypass
 * below compiled, and reached the server it named, before the check read parsed paths.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { headerBag } from '../../src/gateway/context.ts';
import { compileUrlTemplate } from '../../src/policies/url-template.ts';
import { compile, makeContext, run } from './helpers.ts';

const refused = /comes from the request/;

describe('target-url: a consumer value may not choose the backend host', () => {
  for (const template of [
    // message.* is a copy of the request until an invoke replaces it.
    '$(message.headers.x-target)/a',
    'http://$(message.headers.x-host)/b',
    '$(message)/a',
    // Bracket spellings: ctx.get reads the same header.
    "$(request['headers']['x-target'])/a",
    '$(request["headers"]["x-target"])/a',
    'http://$(request[headers].x-host)/latest/meta-data',
    "http://$(['request'].headers.x-host)/a",
    // A host made only of consumer values and dots, or with no fixed last label.
    'http://{svc}.{zone}/x',
    'http://{host}{port}/x',
    'http://{svc}.$(request.headers.zone)/x',
    'http://backend.{tld}/x',
    'http://backend{suffix}/x',
    'http://{host}./x',
    'http://user@{host}:8080/x',
  ]) {
    it(`refuses ${template} at compile time`, () => {
      assert.throws(() => compileUrlTemplate(template, {}), refused);
    });
  }

  for (const [template, properties] of [
    ['$(api.properties.svc)/q/{id}', { svc: 'http://svc/base' }],
    ['http://$(api.properties.host)/q/{id}', { host: 'svc.internal' }],
    ['http://{region}.backend/x', {}],
    ['http://{region}.$(zone).backend.example/x', {}],
    ['http://$(backend-host)/x', {}],
    ['$(target-url)/orders/{id}', {}],
    ['http://backend/$(message.body.id)?q=$(request.headers.x-q)', {}],
    ['http://backend:9084$(request.path)$(request.search)', {}],
    ['http://backend:{port}/x', {}],
  ] as Array<[string, Record<string, string>]>) {
    it(`allows ${template}`, () => {
      assert.doesNotThrow(() => compileUrlTemplate(template, properties));
    });
  }

  it('names message as the copy of the request in the refusal', () => {
    assert.throws(() => compileUrlTemplate('http://$(message.headers.h)/', {}), /message holds a copy of it/);
    assert.throws(() => compileUrlTemplate('http://{a}.{b}/', {}), /no last label/);
  });

  it('a fixed host keeps consumer values in the path and query, encoded', () => {
    const url = compileUrlTemplate('http://backend/x/$(message.headers.id)?q=$(request[headers].q)', {});
    const headers = { id: 'a b', q: '1&r=2' };
    const ctx = makeContext({ headers, message: { headers: headerBag(headers) } });
    assert.equal(url.resolve(ctx).href, 'http://backend/x/a%20b?q=1%26r%3D2');
  });

  it('an assembly with such a target never compiles, so the internal server is never called', async () => {
    let reached = 0;
    const internal = createServer((_req, res) => {
      reached++;
      res.end('internal');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    const port = (internal.address() as AddressInfo).port;
    try {
      const headers = { 'x-target': `http://127.0.0.1:${port}`, 'x-host': `127.0.0.1:${port}` };
      const cases: Array<[string, Parameters<typeof makeContext>[0]]> = [
        ['$(message.headers.x-target)/a', { headers, message: { headers: headerBag(headers) } }],
        ["$(request['headers']['x-target'])/a", { headers }],
        ['http://{svc}.{zone}/x', { parameters: { svc: '127.0.0', zone: `1:${port}` } }],
      ];
      for (const [template, request] of cases) {
        let step;
        try {
          step = compile({ execute: [{ invoke: { version: '2.0.0', 'target-url': template } }] });
        } catch (error) {
          assert.match((error as Error).message, refused, template);
          continue;
        }
        await run(step, makeContext(request));
      }
      assert.equal(reached, 0);
    } finally {
      await new Promise<void>((resolve) => internal.close(() => resolve()));
    }
  });
});
