/** The flow context's variable tree: prototype-free, own keys only, bounded names, shared trees copied on write. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import {
  GatewayContext,
  VariableError,
  emptyMessage,
  headerBag,
  maxVariableNameLength,
  pathCacheUsage,
} from '../../src/gateway/context.ts';
import { AssemblyError } from '../../src/policies/types.ts';
import { inlineRefs } from '../../src/policies/policy-config.ts';
import { apiInput, compile, makeContext } from '../policies/helpers.ts';

function refused(action: () => void): AssemblyError {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof AssemblyError, `expected an AssemblyError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the context to refuse the name');
}

/** A context whose `api` holds `shared`, as the gateway's snapshot shares it between requests. */
/** A context over `api` as given: the same object may be passed to several (the snapshot shares it). */
function contextWith(api: Record<string, unknown>, properties: Record<string, unknown>): GatewayContext {
  return new GatewayContext({
    request: {
      verb: 'GET',
      uri: 'http://h/',
      path: '/',
      search: '',
      headers: {},
      parameters: {},
      body: undefined,
      'content-type': '',
    },
    message: emptyMessage(),
    api,
    properties: properties as Record<string, string>,
    log: pino({ level: 'silent' }),
    operation: { id: undefined, path: '/', verb: 'GET' },
    signal: new AbortController().signal,
  });
}

function contextSharing(shared: { properties: Record<string, unknown>; list: unknown[] }): GatewayContext {
  return contextWith({ name: 'shared', properties: shared.properties, list: shared.list }, shared.properties);
}

describe('flow context variables', () => {
  test('issue-12: writes and clears through __proto__, prototype or constructor are refused as RuntimeError', () => {
    const ctx = makeContext();
    const names = [
      '__proto__.x-tier',
      'message.__proto__.x',
      "message['__proto__'].x",
      'constructor.prototype.x',
      'message.headers.__PROTO__.x',
      'a.prototype',
    ];
    for (const name of names) {
      const error = refused(() => ctx.set(name, 'gold'));
      assert.equal(error.errorName, 'RuntimeError');
      assert.equal(error.status, 500);
      assert.ok(error instanceof VariableError && error.code === 'GW_INVALID_VARIABLE');
      assert.match(error.message, /would reach a prototype/);
      assert.equal(refused(() => ctx.clear(name)).errorName, 'RuntimeError');
    }
    assert.equal(Object.hasOwn(Object.prototype, 'x-tier'), false);
    assert.equal(Object.hasOwn(Object.prototype, 'x'), false);
  });

  test('issue-12: reads see own keys only; prototype segments read as undefined', () => {
    const ctx = makeContext({ headers: { 'x-tier': 'silver' } });
    for (const name of [
      '__proto__',
      'constructor',
      'message.headers.toString',
      'request.headers.hasOwnProperty',
      'message.body.__proto__',
    ]) {
      assert.equal(ctx.get(name), undefined, name);
    }
    ctx.set('obj', JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}'));
    assert.equal(ctx.get('obj.polluted'), undefined);
    assert.equal(ctx.get('request.headers.X-Tier'), 'silver');
  });

  test('issue-12: trees and header bags the context makes have no prototype', () => {
    const ctx = makeContext();
    ctx.set('made.deep.x', 1);
    assert.equal(Object.getPrototypeOf(ctx.vars), null);
    assert.equal(Object.getPrototypeOf(ctx.get('made')), null);
    assert.equal(Object.getPrototypeOf(emptyMessage().headers), null);
    const inherited = Object.create({ 'x-inherited': 'yes' }) as Record<string, string>;
    inherited['x-own'] = 'ok';
    const bag = headerBag(inherited);
    assert.deepEqual(Object.keys(bag), ['x-own']);
    assert.equal(Object.getPrototypeOf(bag), null);
  });

  test('issue-12: a name longer than the limit is refused; the path cache stays within its byte budget', () => {
    const ctx = makeContext();
    const long = 'x'.repeat(maxVariableNameLength + 1);
    assert.equal(refused(() => ctx.get(long)).errorName, 'RuntimeError');
    assert.equal(refused(() => ctx.set(long, 1)).errorName, 'RuntimeError');
    assert.ok(ctx.get('y'.repeat(maxVariableNameLength)) === undefined);
    for (let i = 0; i < 50_000; i++) ctx.get(`v${i}.${'z'.repeat(200)}`);
    const usage = pathCacheUsage();
    assert.ok(usage.bytes <= usage.budgetBytes, `${usage.bytes} > ${usage.budgetBytes}`);
    assert.ok(usage.entries < 10_000);
  });

  test('issue-12: lists grow one index at a time (no sparse list that serializes to gigabytes)', () => {
    const ctx = makeContext();
    ctx.set('list', [1]);
    ctx.set('list[1]', 2);
    assert.deepEqual(ctx.get('list'), [1, 2]);
    assert.equal(refused(() => ctx.set('list[4294967294]', 3)).errorName, 'RuntimeError');
    assert.equal(refused(() => ctx.set('list.length', 4294967295)).errorName, 'RuntimeError');
    assert.equal((ctx.get('list') as unknown[]).length, 2);
  });

  test('issue-12: api.* shared between requests is copied on write: the writer sees it, the next request does not', () => {
    const shared = {
      properties: { maps_url: 'https://maps.example' } as Record<string, unknown>,
      list: ['a'],
    };
    const first = contextSharing(shared);
    first.set('api.properties.maps_url', 'https://evil.example');
    first.set('api.properties.extra', 'x'.repeat(1024));
    first.clear('api.name');
    assert.equal(first.get('api.properties.maps_url'), 'https://evil.example');
    assert.equal(first.get('api.name'), undefined);
    const second = contextSharing(shared);
    assert.equal(second.get('api.properties.maps_url'), 'https://maps.example');
    assert.equal(second.get('api.properties.extra'), undefined);
    assert.equal(second.get('api.name'), 'shared');
    assert.deepEqual(shared.properties, { maps_url: 'https://maps.example' });
    // A policy that mutates what it read fails loudly instead of changing the snapshot.
    assert.throws(() => (second.get('api.list') as unknown[]).push('b'), TypeError);
    assert.deepEqual(shared.list, ['a']);
  });

  test("issue-18: one api tree shared by every request of an operation (the snapshot's) is copied on write, top level included", () => {
    // What requestContext passes since issue 18: the operation's own `api` object, not a copy.
    const api = {
      name: 'shared',
      properties: { maps_url: 'https://maps.example' },
      operation: { id: 'get.stores', path: '/stores' },
    };
    const context = () => contextWith(api, api.properties);
    const first = context();
    first.clear('api.name');
    first.set('api.added', 'x');
    first.set('api.operation.id', 'forged');
    first.set('api.properties.maps_url', 'https://evil.example');
    assert.equal(first.get('api.name'), undefined);
    assert.equal(first.get('api.operation.id'), 'forged');
    const second = context();
    assert.equal(second.get('api.name'), 'shared');
    assert.equal(second.get('api.added'), undefined);
    assert.equal(second.get('api.operation.id'), 'get.stores');
    assert.equal(second.get('api.properties.maps_url'), 'https://maps.example');
    assert.deepEqual(api, {
      name: 'shared',
      properties: { maps_url: 'https://maps.example' },
      operation: { id: 'get.stores', path: '/stores' },
    });
  });

  test('issue-12: set-variable add appends to a shared list in this request only', async () => {
    const shared = { properties: {}, list: ['a'] };
    const ctx = contextSharing(shared);
    await compile({
      execute: [{ 'set-variable': { version: '2.0.0', actions: [{ add: 'api.list', value: 'b' }] } }],
    })(ctx);
    assert.deepEqual(ctx.get('api.list'), ['a', 'b']);
    assert.deepEqual(shared.list, ['a']);
  });

  test('issue-12: set-variable and map refuse prototype segments at publish', () => {
    assert.throws(
      () =>
        compile({
          execute: [{ 'set-variable': { version: '2.0.0', actions: [{ set: '__proto__.x', value: '1' }] } }],
        }),
      /would reach a prototype/,
    );
    assert.throws(
      () =>
        compile({
          execute: [{ 'set-variable': { version: '2.0.0', actions: [{ clear: 'a.constructor' }] } }],
        }),
      /would reach a prototype/,
    );
    const map = (set: string) => ({
      execute: [
        {
          map: {
            version: '2.0.0',
            inputs: { in: { variable: 'request.body' } },
            outputs: { out: { variable: 'message.body' } },
            actions: [{ set, from: 'in' }],
          },
        },
      ],
    });
    assert.throws(() => compile(map('out.__proto__.polluted')), /would reach a prototype/);
    assert.throws(() => compile(map('out.constructor.prototype.x')), /would reach a prototype/);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  test('issue-12: a schema copy keeps a "__proto__" key as a field instead of setting its prototype', () => {
    const schema = JSON.parse('{"type": "object", "__proto__": {"polluted": 1}}') as Record<string, unknown>;
    const copy = inlineRefs(schema, apiInput() as never, '$.schema');
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.keys(copy), ['type', '__proto__']);
    assert.equal((copy as Record<string, unknown>).polluted, undefined);
  });
});
