import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseProductDocument } from '../../src/definitions/index.ts';
import { fixture } from './fixtures.ts';

describe('parseProductDocument: Accessories', () => {
  const product = parseProductDocument(fixture('accessories-product.yaml'), 'accessories-product.yaml');

  it('reads info, contact and license', () => {
    assert.deepEqual([product.name, product.version, product.title], ['accessories', '1.0.0', 'Accessories']);
    assert.equal(product.summary, 'The Accessories product will provide really awesome APIs to your application.');
    assert.deepEqual(product.contact, {
      name: 'Thomas Watson',
      email: 'watson@ibm.com',
      url: 'https://developer.ibm.com/apiconnect/',
    });
    assert.deepEqual(product.license, {
      name: 'The MIT License (MIT)',
      url: 'https://opensource.org/licenses/MIT',
    });
  });

  it('is visible to and subscribable by authenticated consumers only', () => {
    assert.deepEqual(product.visibility, {
      view: { type: 'authenticated', enabled: true, orgs: [], tags: [] },
      subscribe: { type: 'authenticated', enabled: true, orgs: [], tags: [] },
    });
  });

  it('limits silver to 100 calls per hour, hard', () => {
    assert.deepEqual(product.plans[0], {
      name: 'silver',
      title: 'Silver',
      description: 'Limited access to the Accessories APIs',
      approval: false,
      rateLimits: [
        {
          name: 'default',
          unlimited: false,
          count: 100,
          windowMs: 3_600_000,
          value: '100/1hour',
          hardLimit: true,
        },
      ],
      burstLimits: [],
    });
  });

  it('gives gold, which has no rate limits, one unlimited limit and approval', () => {
    assert.equal(product.plans[1].approval, true);
    assert.deepEqual(product.plans[1].rateLimits, [
      { name: 'default', unlimited: true, count: 0, windowMs: 0, value: 'unlimited', hardLimit: false },
    ]);
    assert.equal(product.plans[1].apis, undefined);
  });

  it('lists the APIs by name:version and by $ref', () => {
    assert.deepEqual(product.apis, [
      { key: 'financing', name: 'financing', version: '1.0.0' },
      { key: 'logistics', ref: 'logistics.yaml' },
    ]);
  });
});

describe('parseProductDocument: defaults', () => {
  const product = parseProductDocument(fixture('inventory-product.yaml'), 'inventory-product.yaml');

  it('is public to view and open to authenticated subscribers when visibility is absent', () => {
    assert.deepEqual(product.visibility, {
      view: { type: 'public', enabled: true, orgs: [], tags: [] },
      subscribe: { type: 'authenticated', enabled: true, orgs: [], tags: [] },
    });
    assert.equal(product.title, 'inventory');
  });

  it('titles a plan by its key, without approval, with soft rate limits unless hard-limit is set', () => {
    const plan = product.plans[0];
    assert.deepEqual([plan.name, plan.title, plan.approval], ['default', 'default', false]);
    assert.deepEqual(
      plan.rateLimits.map((limit) => [limit.name, limit.count, limit.windowMs, limit.hardLimit]),
      [
        ['per-hour', 100, 3_600_000, false],
        ['per-second', 10, 1000, true],
      ],
    );
  });

  it('makes burst limits hard', () => {
    assert.deepEqual(product.plans[0].burstLimits, [
      {
        name: 'Default burst-limit',
        unlimited: false,
        count: 5,
        windowMs: 120_000,
        value: '5/2minutes',
        hardLimit: true,
      },
    ]);
  });

  it('reads value: unlimited and the plan api list', () => {
    const open = product.plans[1];
    assert.deepEqual(open.rateLimits, [
      { name: 'default', unlimited: true, count: 0, windowMs: 0, value: 'unlimited', hardLimit: false },
    ]);
    assert.deepEqual(open.apis, ['inventory']);
  });
});

describe('parseProductDocument: v5 form', () => {
  const product = parseProductDocument(fixture('think-product-v5.yaml'), 'think-product-v5.yaml');

  it('reads a single rate-limit as the default limit', () => {
    assert.deepEqual(product.plans[0].rateLimits, [
      {
        name: 'default',
        unlimited: false,
        count: 1000,
        windowMs: 86_400_000,
        value: '1000/1day',
        hardLimit: false,
      },
    ]);
  });

  it('reads custom subscribe visibility with its organisations', () => {
    assert.deepEqual(product.visibility.subscribe, {
      type: 'custom',
      enabled: true,
      orgs: ['partners'],
      tags: [],
    });
  });
});
