/**
 * `format: url` on the linear engine (src/policies/url-format.ts) accepts exactly what
 * ajv-formats 3.0.1's backtracking expression accepts: the private-IPv4 lookaheads written out
 * as octets change nothing. Compared on hosts at every edge of the refused ranges, and on seeded
 * random URL-like strings short enough for V8.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { urlFormat } from '../../src/policies/url-format.ts';

const reference = fullFormats.url as RegExp;
const hosts = [
  ...['10.0.0.1', '127.0.0.1', '11.0.0.1', '9.0.0.1', '126.1.1.1', '128.1.1.1'],
  ...['169.254.1.1', '169.253.1.1', '169.255.1.1', '192.168.0.1', '192.167.0.1', '192.169.0.1'],
  ...['172.15.0.1', '172.16.0.1', '172.31.9.9', '172.32.9.9', '172.160.1.1', '172.2.1.1', '172.200.1.1'],
  ...['8.8.8.8', '223.1.1.1', '224.1.1.1', '1.2.3.254', '1.2.3.255', '1.2.3.0', '01.2.3.4', '1.02.3.4', '1.1.1.1.1'],
  ...['example.com', 'ex-ample.co', 'a.b', 'xn--e.de', 'münchen.de', 'localhost', 'a..b.com', '-a.com', 'EXAMPLE.COM'],
];

describe('format: url', () => {
  it('agrees with ajv-formats on hosts at the edges of the private ranges', () => {
    for (const host of hosts)
      for (const prefix of ['http://', 'https://u:p@', 'ftp://x@y@', 'file://'])
        for (const suffix of ['', ':8080', ':8', '/p?q#f', ' x', '/@10.0.0.1']) {
          const value = prefix + host + suffix;
          assert.equal(urlFormat.validate(value), reference.test(value), value);
        }
  });

  it('agrees with ajv-formats on seeded random URL-like strings', () => {
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
    const parts = [
      'http://',
      'ftp://',
      'u@',
      'u:p@',
      '@',
      ':',
      '.',
      '/',
      '?q',
      '#f',
      ' ',
      '-',
      '1',
      'a',
      'é',
      '\u00a0',
      ':80',
      '%20',
      '😀',
      ...hosts,
    ];
    for (let i = 0; i < 20_000; i++) {
      let value = next() < 0.8 ? pick(['http://', 'https://', 'ftp://']) : '';
      for (let j = 1 + Math.floor(next() * 6); j > 0; j--) value += pick(parts);
      assert.equal(urlFormat.validate(value), reference.test(value), value);
    }
  });
});
