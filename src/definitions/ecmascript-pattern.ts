/**
 * A provider's ECMAScript regular expression (the grammar of the `u` flag, as JSON Schema's
 * `pattern` and jwt-validate's claims are read) rewritten in RE2 syntax with the same meaning,
 * for the linear-time engine of linear-pattern.ts. The source has already been compiled by V8
 * with `u`, so only valid ECMAScript reaches this reader.
 *
 * Where the two syntaxes read alike but mean different things, the ECMAScript meaning is
 * written out: `\s` (ECMA-262 §22.2.2.9: Unicode white space and line terminators; RE2: five
 * ASCII characters), `.` (every character but the four line terminators; RE2: but `\n`), and
 * every literal and escaped character as a code point (`\x{…}`), so RE2's own escapes and
 * bracket rules never apply. What RE2 cannot run in linear time (lookarounds,
 * backreferences) is refused with a {@link PatternRefusal}.
 */

/** Why a pattern is not accepted: its `rule` and a reason that names the construct. */
export class PatternRefusal extends Error {
  constructor(
    readonly rule: 'pattern-syntax' | 'unsupported-pattern',
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'PatternRefusal';
  }
}

export interface PatternFlags {
  ignoreCase: boolean;
  multiline: boolean;
}

type Range = readonly [number, number];

const maxCodePoint = 0x10ffff;
// ECMAScript WhiteSpace and LineTerminator code points (ECMA-262 §12.2, §12.3).
const whiteSpace: readonly Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const notWhiteSpace = complement(whiteSpace);
const anyButLineTerminator = '[^\\x{a}\\x{d}\\x{2028}\\x{2029}]';
const controlEscapes: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

// ECMAScript's General_Category values, short name first, then its long names (ECMA-262 table
// 67); RE2 knows the short one.
const generalCategories = new Map(
  [
    'L Letter; LC Cased_Letter; Lu Uppercase_Letter; Ll Lowercase_Letter; Lt Titlecase_Letter',
    'Lm Modifier_Letter; Lo Other_Letter; M Mark Combining_Mark; Mn Nonspacing_Mark; Mc Spacing_Mark',
    'Me Enclosing_Mark; N Number; Nd Decimal_Number digit; Nl Letter_Number; No Other_Number',
    'P Punctuation punct; Pc Connector_Punctuation; Pd Dash_Punctuation; Ps Open_Punctuation',
    'Pe Close_Punctuation; Pi Initial_Punctuation; Pf Final_Punctuation; Po Other_Punctuation',
    'S Symbol; Sm Math_Symbol; Sc Currency_Symbol; Sk Modifier_Symbol; So Other_Symbol; Z Separator',
    'Zs Space_Separator; Zl Line_Separator; Zp Paragraph_Separator; C Other; Cc Control cntrl',
    'Cf Format; Cs Surrogate; Co Private_Use; Cn Unassigned',
  ]
    .join('; ')
    .split('; ')
    .flatMap((entry) => entry.split(' ').map((name) => [name, entry.split(' ')[0]] as const)),
);

/** The RE2 form of an ECMAScript pattern; throws {@link PatternRefusal} for what RE2 cannot run. */
export function toRe2Syntax(source: string, flags: PatternFlags): string {
  const reader = new PatternReader(source, flags);
  const body = reader.disjunction();
  return flags.ignoreCase ? `(?i)${body}` : body;
}

class PatternReader {
  private at = 0;

  constructor(
    private readonly source: string,
    private readonly flags: PatternFlags,
  ) {}

  disjunction(): string {
    let out = '';
    while (this.at < this.source.length && this.source[this.at] !== ')') {
      if (this.source[this.at] === '|') {
        out += '|';
        this.at++;
        continue;
      }
      out += this.term();
    }
    return out;
  }

  private term(): string {
    const char = this.source[this.at];
    if (char === '^' || char === '$') {
      this.at++;
      if (this.flags.multiline) {
        throw new PatternRefusal(
          'unsupported-pattern',
          `${char} with the m flag (a line ends at \\r, \\u2028 and \\u2029 too in ECMAScript, at \\n only in the linear engine)`,
        );
      }
      return char;
    }
    if (char === '\\' && (this.source[this.at + 1] === 'b' || this.source[this.at + 1] === 'B')) {
      this.at += 2;
      return `\\${this.source[this.at - 1]}`;
    }
    return this.atom() + this.quantifier();
  }

  private atom(): string {
    const char = this.source[this.at];
    if (char === '.') {
      this.at++;
      return anyButLineTerminator;
    }
    if (char === '(') return this.group();
    if (char === '[') return this.characterClass();
    if (char === '\\') {
      this.at++;
      return this.atomEscape();
    }
    return literal(this.codePoint());
  }

  private quantifier(): string {
    const char = this.source[this.at];
    let out = '';
    if (char === '*' || char === '+' || char === '?') {
      out = char;
      this.at++;
    } else if (char === '{') {
      const end = this.source.indexOf('}', this.at);
      out = this.source.slice(this.at, end + 1);
      this.at = end + 1;
    } else return '';
    if (this.source[this.at] === '?') {
      this.at++;
      out += '?';
    }
    return out;
  }

  private group(): string {
    const rest = this.source.slice(this.at, this.at + 4);
    if (rest.startsWith('(?=') || rest.startsWith('(?!')) throw unsupported('a lookahead (?= or (?!');
    if (rest.startsWith('(?<=') || rest.startsWith('(?<!')) throw unsupported('a lookbehind (?<= or (?<!');
    let open = '(';
    if (rest.startsWith('(?:')) {
      open = '(?:';
      this.at += 3;
    } else if (rest.startsWith('(?<')) {
      // The name is dropped: the group keeps its number, and nothing reads groups by name.
      this.at = this.source.indexOf('>', this.at) + 1;
    } else if (rest.startsWith('(?')) {
      throw unsupported('a group modifier (?…)');
    } else this.at++;
    const inner = this.disjunction();
    this.at++;
    return `${open}${inner})`;
  }

  private atomEscape(): string {
    const char = this.source[this.at];
    if (char === 'k' || (char >= '1' && char <= '9')) throw unsupported('a backreference (\\1, \\k<name>)');
    const set = this.classEscape();
    if (set !== undefined) return set.standalone;
    return literal(this.characterEscape());
  }

  /** `\d \D \w \W \s \S \p{…} \P{…}` as an item inside brackets and standing alone, or undefined. */
  private classEscape(): { item: string; standalone: string } | undefined {
    const char = this.source[this.at];
    if ('dDwW'.includes(char)) {
      this.at++;
      return { item: `\\${char}`, standalone: `\\${char}` };
    }
    if (char === 's' || char === 'S') {
      this.at++;
      const item = (char === 's' ? whiteSpace : notWhiteSpace).map(rangeText).join('');
      return { item, standalone: `[${item}]` };
    }
    if (char === 'p' || char === 'P') {
      // ECMAScript closes \P{…} under case folding after complementing it, RE2 before.
      if (char === 'P' && this.flags.ignoreCase)
        throw new PatternRefusal('unsupported-pattern', '\\P{…} with the i flag (its case folding differs)');
      const end = this.source.indexOf('}', this.at);
      const name = this.source.slice(this.at + 2, end);
      this.at = end + 1;
      const property = unicodeProperty(name);
      if (typeof property !== 'string') {
        const ranges = char === 'p' ? property : complement(property);
        const item = ranges.map(rangeText).join('');
        return { item, standalone: `[${item}]` };
      }
      return { item: `\\${char}{${property}}`, standalone: `\\${char}{${property}}` };
    }
    return undefined;
  }

  /** The code point of a CharacterEscape (the backslash already read). */
  private characterEscape(): number {
    const char = this.source[this.at];
    if (char in controlEscapes) {
      this.at++;
      return controlEscapes[char];
    }
    if (char === '0') {
      this.at++;
      return 0;
    }
    if (char === 'c') {
      this.at += 2;
      return this.source.charCodeAt(this.at - 1) % 32;
    }
    if (char === 'x') {
      this.at += 3;
      return parseInt(this.source.slice(this.at - 2, this.at), 16);
    }
    if (char === 'u') return this.unicodeEscape();
    return this.codePoint();
  }

  // \uHHHH, \u{H…}, and a \uLEAD\uTRAIL pair read as the one code point it encodes (the u flag).
  private unicodeEscape(): number {
    if (this.source[this.at + 1] === '{') {
      const end = this.source.indexOf('}', this.at);
      const value = parseInt(this.source.slice(this.at + 2, end), 16);
      this.at = end + 1;
      return value;
    }
    const unit = parseInt(this.source.slice(this.at + 1, this.at + 5), 16);
    this.at += 5;
    const trail = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.source.slice(this.at, this.at + 6));
    if (unit >= 0xd800 && unit <= 0xdbff && trail !== null) {
      this.at += 6;
      return 0x10000 + ((unit - 0xd800) << 10) + (parseInt(trail[1], 16) - 0xdc00);
    }
    return unit;
  }

  private characterClass(): string {
    this.at++;
    const negated = this.source[this.at] === '^';
    if (negated) this.at++;
    const items: string[] = [];
    while (this.source[this.at] !== ']') {
      const first = this.classAtom();
      if (typeof first === 'string') {
        items.push(first);
        continue;
      }
      if (this.source[this.at] === '-' && this.source[this.at + 1] !== ']') {
        this.at++;
        const last = this.classAtom() as number;
        items.push(rangeText([first, last]));
      } else items.push(literal(first));
    }
    this.at++;
    // `[]` matches nothing and `[^]` any character; RE2 reads `[]…]` and `[^]…]` differently.
    if (items.length === 0) return negated ? '[\\x{0}-\\x{10ffff}]' : '[^\\x{0}-\\x{10ffff}]';
    return `[${negated ? '^' : ''}${items.join('')}]`;
  }

  /** A code point, or the RE2 text of a class escape (which cannot end a range under `u`). */
  private classAtom(): number | string {
    if (this.source[this.at] !== '\\') return this.codePoint();
    this.at++;
    const char = this.source[this.at];
    if (char === 'b') {
      this.at++;
      return 0x08;
    }
    if (char === '-') {
      this.at++;
      return 0x2d;
    }
    return this.classEscape()?.item ?? this.characterEscape();
  }

  private codePoint(): number {
    const value = this.source.codePointAt(this.at)!;
    this.at += value > 0xffff ? 2 : 1;
    return value;
  }
}

function unsupported(construct: string): PatternRefusal {
  return new PatternRefusal('unsupported-pattern', `${construct} cannot be matched in linear time`);
}

function literal(codePoint: number): string {
  return `\\x{${codePoint.toString(16)}}`;
}

function rangeText([low, high]: Range): string {
  return low === high ? literal(low) : `${literal(low)}-${literal(high)}`;
}

function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [low, high] of ranges) {
    if (low > next) out.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= maxCodePoint) out.push([next, maxCodePoint]);
  return out;
}

/** RE2's name for a `\p{…}` of ECMAScript, or the ranges of one RE2 has no name for. */
function unicodeProperty(text: string): string | readonly Range[] {
  const [name, value] = text.includes('=') ? text.split('=') : [undefined, text];
  if (name === 'General_Category' || name === 'gc' || name === undefined) {
    const short = generalCategories.get(value);
    if (short !== undefined) return short;
  }
  // RE2 knows scripts by their long names only (Greek, not Grek): linear-pattern.ts refuses the rest.
  if (name === 'Script' || name === 'sc') return value;
  if (name === undefined && value === 'Any') return 'Any';
  if (name === undefined && value === 'ASCII') return [[0, 0x7f]];
  throw new PatternRefusal('unsupported-pattern', `the Unicode property \\p{${text}} is not supported`);
}
