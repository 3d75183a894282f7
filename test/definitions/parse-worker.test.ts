/**
 * An import parsed in the worker thread (services/provider/api-parse-pool.ts) reads exactly as
 * one parsed on the main thread: the same definition, or the same error class, code, message,
 * file, path, rule, reason and problems.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { parseApiDocument } from '../../src/definitions/index.ts';
import { DefinitionError, PorticoError } from '../../src/errors.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import {
  closeApiParseWorker,
  configureApiParseWorker,
  mainThreadChars,
  parseImportedApi,
  parseInWorker,
} from '../../src/services/provider/api-parse-pool.ts';
import { fromBatches, toBatches } from '../../src/services/provider/value-batches.ts';
import { fixture } from './fixtures.ts';
import { manyPathsDocument } from './many-paths.ts';

/** What a parse ended with, in a form deepEqual compares whole. */
async function outcome(parse: () => unknown): Promise<unknown> {
  try {
    return { definition: await parse() };
  } catch (error) {
    assert.ok(error instanceof Error);
    const read = { name: error.name, constructor: error.constructor.name, message: error.message };
    if (error instanceof DefinitionError) {
      return { ...read, json: error.toJSON(), problems: error.problems, problemCount: error.problemCount };
    }
    if (error instanceof PorticoError) return { ...read, json: error.toJSON(), status: error.status };
    return read;
  }
}

async function sameInWorker(text: string, file: string): Promise<unknown> {
  const here = await outcome(() => parseApiDocument(text, file, assemblyProblems));
  const there = await outcome(() => parseInWorker(text, file));
  assert.deepEqual(there, here);
  return here;
}

const brokenApis = readdirSync(fileURLToPath(new URL('../fixtures/definitions/broken/', import.meta.url))).filter(
  (name) => !name.startsWith('product') && name !== 'bad-rate-limit.yaml',
);

describe('parsing an API document in the worker', () => {
  after(() => closeApiParseWorker());

  it('refuses every broken fixture with the same error as the main thread', async () => {
    assert.ok(brokenApis.length >= 10);
    for (const name of brokenApis) {
      const read = (await sameInWorker(fixture(`broken/${name}`), `broken/${name}`)) as { json?: object };
      assert.ok(read.json, `${name} was accepted`);
    }
  });

  it('accepts the good fixtures with the same definition', async () => {
    for (const name of ['logistics.yaml', 'financing-v5.yaml', 'orders-oas30.yaml', 'geocoder-oas31.json']) {
      const read = (await sameInWorker(fixture(name), name)) as { definition?: { operations: unknown[] } };
      assert.ok(read.definition && read.definition.operations.length > 0, `${name} was refused`);
    }
  });

  it('gives text that is no document, and a cut list of problems, the same error', async () => {
    const parse = (await sameInWorker('{"swagger": "2.0",', 'cut.json')) as { json: { error: { code: string } } };
    assert.equal(parse.json.error.code, 'DEF_PARSE');
    const many = (await sameInWorker(manyPathsDocument(2_000, true), 'many.json')) as { problemCount: number };
    assert.equal(many.problemCount, 2_000);
  });

  it('parses a large import in the worker and a small one here, with the same result', async () => {
    const large = manyPathsDocument(2_000, false);
    assert.ok(large.length > mainThreadChars);
    assert.deepEqual(
      await parseImportedApi(large, 'large.json'),
      parseApiDocument(large, 'large.json', assemblyProblems),
    );
    const small = fixture('logistics.yaml');
    assert.ok(small.length < mainThreadChars);
    assert.deepEqual(
      await parseImportedApi(small, 'small.yaml'),
      parseApiDocument(small, 'small.yaml', assemblyProblems),
    );
  });

  it('rebuilds a large definition piece by piece with its keys, their order and __proto__ keys', async () => {
    const document = JSON.parse(manyPathsDocument(1_000, false)) as Record<string, unknown>;
    // A `__proto__` key stays an own key, as JSON.parse makes it, inside a map cut into pieces.
    const definitions = JSON.parse(
      `{${Array.from({ length: 12_000 }, (_, index) => `"d${index}": {"type": "object"}`).join(',')}, "__proto__": {"type": "string"}}`,
    ) as Record<string, unknown>;
    const text = JSON.stringify({ ...document, definitions });
    const read = (await sameInWorker(text, 'proto.json')) as { definition: { document: Record<string, object> } };
    const rebuilt = read.definition.document.definitions;
    assert.ok(Object.hasOwn(rebuilt, '__proto__'));
    assert.equal(Object.getPrototypeOf(rebuilt), Object.prototype);
    assert.deepEqual(Object.keys(rebuilt), Object.keys(definitions));
    const batches = toBatches({ definitions, list: [1, undefined, { a: undefined }] });
    assert.ok(batches.length > 1);
    assert.deepEqual(await fromBatches(batches), { definitions, list: [1, undefined, { a: undefined }] });
  });

  it('serves the importing orgs in turn: one org’s queue of large imports delays another’s by one job', async () => {
    const text = manyPathsDocument(3_000, false);
    const finished: string[] = [];
    const parse = (label: string, owner: string) =>
      parseInWorker(text, `${label}.json`, owner).then(() => finished.push(label));
    // org-a's first job goes to the worker at once, its next two wait; org-b's comes after them.
    const jobs = [parse('a1', 'org-a'), parse('a2', 'org-a'), parse('a3', 'org-a'), parse('b1', 'org-b')];
    await Promise.all(jobs);
    assert.deepEqual(finished, ['a1', 'b1', 'a2', 'a3']);
  });

  it('refuses a document that needs more memory than the worker may use, and goes on with the next job', async () => {
    await closeApiParseWorker();
    configureApiParseWorker({ memoryMb: 64 });
    try {
      const huge = manyPathsDocument(40_000, false);
      const small = manyPathsDocument(1_000, false, 'after');
      const [refused, next] = await Promise.allSettled([
        parseInWorker(huge, 'huge.json', 'org-a'),
        parseInWorker(small, 'after.json', 'org-b'),
      ]);
      assert.equal(refused.status, 'rejected');
      const error = (refused as PromiseRejectedResult).reason as unknown;
      assert.ok(error instanceof PorticoError, String(error));
      assert.equal(error.code, 'MGMT_DOCUMENT_TOO_COMPLEX');
      assert.equal(error.status, 413);
      assert.match(error.message, /huge\.json needs more than 64 MB/);
      assert.equal(next.status, 'fulfilled');
      assert.equal((next as PromiseFulfilledResult<{ name: string }>).value.name, 'after');
    } finally {
      await closeApiParseWorker();
      configureApiParseWorker({ memoryMb: 1024 });
    }
  });

  it('starts another worker for an import after the close', async () => {
    await closeApiParseWorker();
    const definition = await parseInWorker(fixture('logistics.yaml'), 'logistics.yaml');
    assert.equal(definition.name, 'logistics');
  });
});
