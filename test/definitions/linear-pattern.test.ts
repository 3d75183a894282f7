/**
 * The linear engine for provider-written patterns (src/definitions/linear-pattern.ts): it
 * answers a pattern V8 backtracks on, in time linear in the value; it means what ECMAScript
 * means (compared with V8 on a corpus of provider-style patterns and on seeded random ones);
 * and it refuses, with a rule and a reason, what RE2 cannot run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileLinearPattern, maxPatternInstructions, patternRefusal } from '../../src/definitions/linear-pattern.ts';

// A seeded generator, so a failure names a case that can be run again.
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
}
const alphabet = ['a', 'b', 'c', 'A', 'K', '1', '_', '-', '.', '/', ' ', '\n', '\r', '\t', '\v', '\u00a0', '\u2028'];
const exotic = ['\ufeff', '\u017f', '\u212a', 'é', '😀', '\u0000', 'q'];

function inputs(next: () => number, count: number): string[] {
  const letters = [...alphabet, ...exotic];
  const out = ['', ...letters];
  for (let i = 0; i < count; i++) {
    let text = '';
    const length = Math.floor(next() * 9);
    for (let j = 0; j < length; j++) text += letters[Math.floor(next() * letters.length)];
    out.push(text);
  }
  return out;
}

/**
 * Asserts the linear engine and V8 agree on `test`, and on where the first match starts and what
 * it holds. `startOnly` compares the start alone: which of several matches from one place is
 * taken can differ, as documented, where a repeated group can match empty text (ECMAScript
 * refuses an empty repetition and looks further) or holds a group (ECMAScript clears it at each
 * repetition, RE2 keeps its last match); whether and where a match starts cannot.
 */
function assertSameAsV8(source: string, texts: readonly string[], flags = 'u', startOnly = false): void {
  const v8 = new RegExp(source, flags);
  const linear = compileLinearPattern(source, flags);
  for (const text of texts) {
    const where = `/${source}/${flags} on ${JSON.stringify(text)}`;
    assert.equal(linear.test(text), v8.test(text), where);
    const expected = v8.exec(text);
    const found = linear.find(text);
    assert.equal(found?.index, expected?.index, where);
    if (!startOnly) assert.deepEqual(found?.groups, expected === null ? undefined : [...expected], where);
  }
}

const providerPatterns = [
  '^[0-9]{5}$',
  '^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$',
  '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$',
  '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?$',
  '^(?:\\+|00)?[1-9]\\d{1,14}$',
  '^([A-Za-z0-9]+ ?)*$',
  '^\\s*\\S+\\s*$',
  '^[^\\s/]+$',
  "^\\p{L}[\\p{L}\\p{N} '-]*$",
  '^\\P{Cc}*$',
  '^[\\u0000-\\u007F]*$',
  '\\bq\\B',
  '^.$',
  '^[^]$',
  '^[]?$',
  '\\u{1F600}|\\uD83D\\uDE00',
  '^a|b$',
  '(?<year>\\d{4})-(\\d{2})?',
  '^[\\w.-]+$',
  '^[\\s\\S]{1,3}$',
  '^\\p{Script=Latin}+$',
  '^\\p{Letter}\\p{gc=Nd}?\\p{sc=Latin}*\\p{digit}$',
  '^\\p{ASCII}+$',
  '^\\x41\\cJ\\0\\/\\^\\$$',
  '^[\\b\\-\\]]+$',
  '^(a+?)(b*)',
];

describe('linear patterns', () => {
  it("answers the review's pattern ^([A-Za-z0-9]+ ?)*$ on 100 000 characters", () => {
    // V8 took 5 s at 31 characters, doubling with each one more.
    const pattern = compileLinearPattern('^([A-Za-z0-9]+ ?)*$');
    assert.equal(pattern.test(`${'a'.repeat(100_000)}!`), false);
    assert.equal(pattern.test('hello world 42'), true);
  });

  it('match as V8 does on provider-style patterns', () => {
    const texts = inputs(random(1), 300);
    for (const source of providerPatterns) assertSameAsV8(source, texts);
  });

  it('match as V8 does on seeded random patterns', () => {
    const atoms = [
      'a',
      'b',
      'K',
      '.',
      '\\d',
      '\\w',
      '\\s',
      '\\S',
      '\\W',
      '[a-c]',
      '[^ab]',
      '[\\s\\d]',
      '[^\\S]',
      '\\u00e9',
      '\\u{1F600}',
      '\\/',
      '\\.',
      '[^]',
      '\\p{Lu}',
      '\\P{L}',
      '\\bq',
    ];
    const next = random(2);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
    const piece = (depth: number): string => {
      const roll = next();
      let out =
        roll < 0.6 || depth > 2
          ? pick(atoms)
          : roll < 0.8
            ? `(${piece(depth + 1)}${piece(depth + 1)})`
            : `(?:${piece(depth + 1)}|${piece(depth + 1)})`;
      if (next() < 0.4) out += pick(['*', '+', '?', '{1,2}', '*?', '+?']);
      return out;
    };
    const texts = inputs(next, 60);
    for (let i = 0; i < 300; i++) {
      const source = `${next() < 0.3 ? '^' : ''}${piece(0)}${piece(0)}${next() < 0.3 ? '$' : ''}`;
      assertSameAsV8(source, texts, 'u', true);
    }
  });

  it('match as V8 does with the i flag (JSONata literals)', () => {
    const texts = inputs(random(3), 200);
    // Not \\b: ECMAScript counts U+017F and U+212A as word characters under i, RE2 does not (documented).
    for (const source of ['^k$', '^s+$', '^[a-z]+$', '^[^a-z]$', '^\\w$', '^\\W$', '^\\p{Lu}$', '^a|b$'])
      assertSameAsV8(source, texts, 'iu');
  });

  it('keep ECMAScript meaning where RE2 syntax reads the same text otherwise', () => {
    // \s: Unicode white space and line terminators (RE2: [\t\n\f\r ]).
    for (const space of ['\u00a0', '\ufeff', '\u2028', '\u3000', '\v'])
      assert.equal(compileLinearPattern('^\\s$').test(space), true);
    // .: not \r, \u2028, \u2029 (RE2: all but \n); an astral character is one.
    for (const end of ['\r', '\u2028', '\u2029']) assert.equal(compileLinearPattern('^.$').test(end), false);
    assert.equal(compileLinearPattern('^.$').test('😀'), true);
    // $ without m: the very end, not before a final \n.
    assert.equal(compileLinearPattern('^a$').test('a\n'), false);
    // [] matches nothing and [^] anything (RE2 reads `[]a` and `[^]a` as unterminated classes).
    assert.equal(compileLinearPattern('[]a').test('a'), false);
    assert.equal(compileLinearPattern('^[^]a$').test('\na'), true);
  });

  it('give UTF-16 offsets and unmatched groups as undefined, as exec does', () => {
    const found = compileLinearPattern('(x)|(y)').find('😀y', 0);
    assert.deepEqual(found, { index: 2, end: 3, groups: ['y', undefined, 'y'] });
    assert.equal(compileLinearPattern('y').find('y', 2), null);
  });
});

describe('patterns refused', () => {
  const refusals: Array<[string, string, RegExp, string?]> = [
    ['^(?=.*\\d).{8,}$', 'unsupported-pattern', /lookahead/],
    ['^(?!admin$).*$', 'unsupported-pattern', /lookahead/],
    ['(?<=\\$)\\d+', 'unsupported-pattern', /lookbehind/],
    ['^(a)\\1$', 'unsupported-pattern', /backreference/],
    ['^(?<c>a)\\k<c>$', 'unsupported-pattern', /backreference/],
    ['^a{1001}$', 'unsupported-pattern', /repetition count above 1000/],
    ['^(a{100}){20}$', 'unsupported-pattern', /repetition count above 1000/],
    ['^.{0,1000}$', 'unsupported-pattern', new RegExp(`more than the ${maxPatternInstructions}`)],
    ['^\\p{Script=Grek}$', 'unsupported-pattern', /Unicode property/],
    ['^\\p{Emoji}$', 'unsupported-pattern', /Unicode property/],
    ['^([a-z]$', 'pattern-syntax', /not a valid regular expression/],
    ['^\\-$', 'pattern-syntax', /not a valid regular expression/],
    ['^a$', 'unsupported-pattern', /m flag/, 'mu'],
    ['^\\P{Lu}$', 'unsupported-pattern', /i flag/, 'iu'],
  ];
  for (const [source, rule, reason, flags] of refusals) {
    it(`refuses ${source}${flags ? ` (${flags})` : ''} as ${rule}`, () => {
      const refusal = patternRefusal(source, flags);
      assert.equal(refusal?.rule, rule);
      assert.match(refusal.reason, reason);
    });
  }

  it('accepts the m flag on a pattern without anchors, where it changes nothing', () => {
    assert.equal(compileLinearPattern('b', 'mu').test('a\nb'), true);
  });
});
