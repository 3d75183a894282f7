import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PorticoError } from '../../src/errors.ts';
import { parseApiDocument as parseDocument } from '../../src/definitions/index.ts';
import { documentLimits } from '../../src/definitions/document-limits.ts';
import { parseText } from '../../src/definitions/parse-text.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';

const parseApiDocument = (text: string, file: string) => parseDocument(text, file, assemblyProblems);
const head = "swagger: '2.0'\ninfo:\n  title: Limits\n  version: 1.0.0\n";

/** Asserts a DEF_PARSE for `file` whose reason matches `reason`, and returns its params. */
function refused(read: () => unknown, file: string, reason: RegExp): Record<string, unknown> {
  try {
    read();
  } catch (error) {
    assert.ok(error instanceof PorticoError, `expected DEF_PARSE, got ${String(error)}`);
    assert.equal(error.code, 'DEF_PARSE');
    assert.equal(error.params.file, file);
    assert.match(String(error.params.reason), reason);
    return error.params;
  }
  assert.fail(`${file} was accepted`);
}

function paths(count: number): string {
  let text = `${head}paths:\n`;
  for (let index = 0; index < count; index++) {
    text += `  /items${index}/{id}:\n    get:\n      operationId: get${index}\n`;
    text += `      parameters: [{name: id, in: path, required: true, type: string}]\n`;
    text += `      responses: {'200': {description: ok}}\n`;
  }
  return text;
}

describe('document limits', () => {
  it('issue: JSON nested 200,000 deep is DEF_PARSE at the bracket past the depth limit, not a stack overflow', () => {
    const text = '{"swagger":"2.0","x-deep":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}';
    const params = refused(() => parseApiDocument(text, 'deep.json'), 'deep.json', /nested deeper than 100 levels/);
    assert.equal(params.format, 'JSON');
    assert.deepEqual([params.line, params.column], [1, 27 + documentLimits.maxDepth - 1]);
  });

  it('keeps brackets inside JSON strings out of the depth', () => {
    const text = JSON.stringify({ swagger: '2.0', info: { title: '['.repeat(500), version: '1' }, paths: {} });
    assert.equal(parseApiDocument(text, 'brackets.json').title, '['.repeat(500));
  });

  it('refuses YAML nested past the depth limit, in flow and in block style', () => {
    refused(() => parseText(`x: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, 'flow.yaml'), 'flow.yaml', /nested deeper/);
    refused(() => parseText(`x:\n${'- '.repeat(5000)}0\n`, 'block.yaml'), 'block.yaml', /nested deeper/);
  });

  it('accepts nesting at the depth limit', () => {
    const depth = documentLimits.maxDepth;
    const value = parseText(`${'['.repeat(depth)}${']'.repeat(depth)}`, 'edge.json').value;
    assert.ok(Array.isArray(value));
    assert.ok(parseText(`x: ${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}\n`, 'edge.yaml').value);
  });

  it('issue: a YAML alias bomb is DEF_PARSE naming the alias line, not a 500', () => {
    let text = `${head}paths: {}\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n`;
    for (let level = 1; level < 10; level++)
      text += `a${level}: &a${level} [${Array(10)
        .fill(`*a${level - 1}`)
        .join(', ')}]\n`;
    const params = refused(() => parseApiDocument(text, 'bomb.yaml'), 'bomb.yaml', /aliases expand to more than/);
    assert.ok(Number(params.line) > 6, `line ${String(params.line)}`);
  });

  it('refuses an alias inside the node it refers to rather than building a cyclic value', () => {
    refused(() => parseText('x: &a [1, *a]\n', 'cycle.yaml'), 'cycle.yaml', /recursive/);
  });

  it('still reads aliases within the limits, as shared values', () => {
    const { value } = parseText('a: &a {b: 1}\nc: *a\n', 'alias.yaml') as { value: Record<string, unknown> };
    assert.deepEqual(value, { a: { b: 1 }, c: { b: 1 } });
  });

  it('issue: a 1.5 million-element YAML array is refused by the node count', () => {
    const text = `${head}paths: {}\nx-list: [${Array(1_500_000).fill('0').join(',')}]\n`;
    const params = refused(() => parseApiDocument(text, 'array.yaml'), 'array.yaml', /more than 1,000,000 values/);
    assert.equal(params.line, 6);
  });

  it('refuses a flood of empty YAML items and of JSON values', () => {
    refused(() => parseText('-\n'.repeat(1_000_001), 'empty.yaml'), 'empty.yaml', /more than 1,000,000/);
    refused(() => parseText(`[${'0,'.repeat(1_000_001)}0]`, 'many.json'), 'many.json', /more than 1,000,000/);
  });

  it('refuses text longer than the size limit', () => {
    const text = `${head}x-pad: '${' '.repeat(documentLimits.maxChars)}'\n`;
    refused(() => parseText(text, 'big.yaml'), 'big.yaml', /more than 10,485,760/);
  });

  it('issue: 60,000 paths no longer compare every key with every earlier key', () => {
    // `yaml`'s unique-key check ran `items.some(...)` over the earlier keys of the map for each
    // key: 12.5 million comparisons for these 5,000 paths (60,000 paths: 287 s). Counted, not timed.
    const some = Array.prototype.some;
    let comparisons = 0;
    Array.prototype.some = function counted(this: unknown[], predicate, thisArg?: unknown) {
      return some.call(this, (...args) => (comparisons++, predicate.apply(thisArg, args)));
    };
    try {
      parseText(paths(5000), 'api.yaml');
    } finally {
      Array.prototype.some = some;
    }
    assert.ok(comparisons < 100_000, `${comparisons} comparisons`);
  });

  it('names the line of a duplicate among 20,000 paths', () => {
    const duplicated = paths(20_000) + '  /items19999/{id}: {}\n';
    const params = refused(
      () => parseText(duplicated, 'dup.yaml'),
      'dup.yaml',
      /^line \d+, column 3: Map keys must be unique$/,
    );
    assert.equal(params.line, 5 + 5 * 20_000 + 1);
  });

  it('imports an API of 2,000 operations', () => {
    assert.equal(parseApiDocument(paths(2000), 'api.yaml').operations.length, 2000);
  });

  it('refuses keys that only differ in YAML type, which a JavaScript object would merge', () => {
    refused(() => parseText("1: a\n'1': b\n", 'keys.yaml'), 'keys.yaml', /line 2, column 1: Map keys must be unique/);
  });

  it('refuses a second YAML document', () => {
    refused(() => parseText('a: 1\n---\nb: 2\n', 'two.yaml'), 'two.yaml', /more than one YAML document/);
  });
});
