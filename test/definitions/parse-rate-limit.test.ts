import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRateLimit } from '../../src/definitions/index.ts';

const second = 1000;
const minute = 60 * second;
const hour = 60 * minute;
const day = 24 * hour;

describe('parseRateLimit', () => {
  const accepted: Array<[string, number, number]> = [
    ['100/1hour', 100, hour],
    ['100/hour', 100, hour],
    ['10/1second', 10, second],
    ['5/2minute', 5, 2 * minute],
    ['5/2minutes', 5, 2 * minute],
    ['1000/1day', 1000, day],
    ['3/days', 3, day],
    ['7/1week', 7, 7 * day],
    ['50 / 3 Hours', 50, 3 * hour],
  ];
  for (const [value, count, windowMs] of accepted) {
    it(`reads ${value} as ${count} calls per ${windowMs} ms`, () => {
      assert.deepEqual(parseRateLimit(value), { unlimited: false, count, windowMs });
    });
  }

  it('reads unlimited in any case', () => {
    assert.deepEqual(parseRateLimit('unlimited'), { unlimited: true, count: 0, windowMs: 0 });
    assert.deepEqual(parseRateLimit('Unlimited'), { unlimited: true, count: 0, windowMs: 0 });
  });

  for (const value of ['100', '100 per hour', '100/1fortnight', 'hour/100', '-1/hour', '1.5/hour', '', '100/1h']) {
    it(`refuses ${JSON.stringify(value)} naming the expected form`, () => {
      assert.throws(() => parseRateLimit(value), /is not of the form <count>\/<n><unit>/);
    });
  }

  it('refuses a zero count and a zero interval', () => {
    assert.throws(() => parseRateLimit('0/1hour'), /the count must be at least 1/);
    assert.throws(() => parseRateLimit('10/0hour'), /the interval must be at least 1/);
  });
});
