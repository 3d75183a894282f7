/** Settings readers (src/config/readers.ts): a bad value stops the start with CONFIG_INVALID naming the setting. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { integer, number } from '../../src/config/readers.ts';
import { PorticoError } from '../../src/errors.ts';

function refused(read: () => number, setting: string, expected: RegExp): void {
  assert.throws(read, (error: unknown) => {
    assert.ok(error instanceof PorticoError);
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.match(error.message, new RegExp(setting));
    assert.match(error.message, expected);
    return true;
  });
}

describe('settings readers', () => {
  it('integer: the fallback when unset or empty, the value when in range, refused otherwise', () => {
    assert.equal(integer({}, 'X', 7), 7);
    assert.equal(integer({ X: '' }, 'X', 7), 7);
    assert.equal(integer({ X: '12' }, 'X', 7, 0, 100), 12);
    for (const bad of ['1.5', 'abc', '101', '-1', 'Infinity', '0x'])
      refused(() => integer({ X: bad }, 'X', 7, 0, 100), 'X', /an integer from 0 to 100/);
  });

  it('number: fractions accepted, not-finite and out-of-range values refused', () => {
    assert.equal(number({ Y: '0.25' }, 'Y', 1, 0, 1), 0.25);
    assert.equal(number({}, 'Y', 1, 0, 1), 1);
    for (const bad of ['NaN', 'Infinity', '2', 'x'])
      refused(() => number({ Y: bad }, 'Y', 1, 0, 1), 'Y', /a number from 0 to 1/);
  });
});
