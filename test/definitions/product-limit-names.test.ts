/**
 * A plan's assembly limit names are the provider's own words: one spelled like an
 * Object.prototype member (`constructor`, `__proto__`, `toString`) is a limit like any other.
 * Before, each made the product import throw a TypeError (500) and, in a product document that
 * reached the store, the gateway's snapshot build (every organization's APIs) fail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseProductDocument } from '../../src/definitions/index.ts';
import { planShares } from '../../src/gateway/subscriptions.ts';
import type { SnapshotData } from '../../src/store/snapshot-data.ts';

const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty'];

/** A product whose gold plan defines one assembly rate limit and one assembly burst limit per name. */
function productDocument(): Record<string, unknown> {
  const rate: Record<string, unknown> = {};
  const burst: Record<string, unknown> = {};
  names.forEach((name, i) => {
    // defineProperty: a literal `__proto__` key would set the prototype instead of naming a limit.
    Object.defineProperty(rate, name, { value: { value: `${i + 2}/1hour`, 'hard-limit': true }, enumerable: true });
    Object.defineProperty(burst, name, { value: [{ value: `${i + 1}/1second` }], enumerable: true });
  });
  return {
    product: '1.0.0',
    info: { name: 'p', version: '1.0.0' },
    plans: { gold: { 'assembly-rate-limits': rate, 'assembly-burst-limits': burst } },
    apis: {},
  };
}

describe('assembly limit names spelled like Object.prototype members', () => {
  test('a product defining them imports, each name holding exactly its own limits', () => {
    const product = parseProductDocument(JSON.stringify(productDocument()), 'p.json');
    const limits = product.plans[0].assemblyLimits;
    assert.ok(limits !== undefined);
    assert.deepEqual(Object.keys(limits).sort(), [...names].sort());
    names.forEach((name, i) => {
      assert.ok(Object.hasOwn(limits, name), name);
      assert.deepEqual(
        limits[name].map((limit) => [limit.name, limit.count, limit.hardLimit]),
        [
          [name, i + 2, true],
          [name, i + 1, true],
        ],
      );
    });
    assert.equal(Object.getPrototypeOf(limits), null, 'no name can reach a prototype');
  });

  test('YAML with the same names imports too', () => {
    const yaml = `product: 1.0.0\ninfo: {name: p, version: 1.0.0}\nplans:\n  gold:\n    assembly-rate-limits:\n${names
      .map((name) => `      ${name}: {value: 5/1hour}\n`)
      .join('')}apis: {}\n`;
    const limits = parseProductDocument(yaml, 'p.yaml').plans[0].assemblyLimits ?? {};
    for (const name of names) assert.equal(limits[name]?.[0]?.count, 5, name);
  });

  test("the gateway builds the plan's shared limits from such a document, by own name only", () => {
    const data = {
      products: [
        { id: 'prod-1', name: 'p', version: '1.0.0', title: 'P', document: JSON.stringify(productDocument()) },
      ],
      plans: [
        { id: 'plan-1', product_id: 'prod-1', name: 'gold', title: 'Gold', rate_limits: '[]', burst_limits: '[]' },
      ],
    } as unknown as SnapshotData;
    const shares = planShares(data, new Map(data.products.map((p) => [p.id, p])));
    const named = shares.get('plan-1')?.named;
    assert.ok(named !== undefined);
    names.forEach((name, i) => {
      assert.ok(Object.hasOwn(named, name), name);
      assert.deepEqual(
        named[name].map((rule) => [rule.name, rule.limit, rule.hard]),
        [
          [name, i + 2, true],
          [name, i + 1, true],
        ],
      );
    });
    assert.equal(Object.getPrototypeOf(named), null);
    assert.equal(Object.hasOwn(named, 'valueOf'), false, 'a name the plan does not define is none');
  });
});

describe('plan names spelled like Object.prototype members', () => {
  test('a plan named toString or constructor that the product document dropped covers no API', () => {
    const document = { product: '1.0.0', info: { name: 'p', version: '2.0.0' }, plans: { gold: {} }, apis: { a: {} } };
    const data = {
      products: [{ id: 'prod-1', name: 'p', version: '2.0.0', title: 'P', document: JSON.stringify(document) }],
      plans: ['gold', 'toString', 'constructor', 'valueOf', 'gone'].map((name) => ({
        id: name,
        product_id: 'prod-1',
        name,
        title: name,
        rate_limits: '[]',
        burst_limits: '[]',
      })),
    } as unknown as SnapshotData;
    const shares = planShares(data, new Map(data.products.map((p) => [p.id, p])));
    assert.equal(shares.get('gold')?.apis, undefined, 'a plan without apis: covers every API');
    for (const name of ['toString', 'constructor', 'valueOf', 'gone']) {
      assert.deepEqual([...(shares.get(name)?.apis ?? ['every API'])], [], name);
      assert.deepEqual(Object.keys(shares.get(name)?.named ?? { missing: 1 }), [], name);
    }
  });
});
