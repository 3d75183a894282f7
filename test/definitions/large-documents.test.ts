/**
 * A large or badly broken API document: its problems are found in time linear in the document
 * (ajv re-copied its whole error list at every failing parameter: 10,000 bad path items took
 * 15 s), and the error lists the first problems, always the same ones, with the count of all.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { parseApiDocument } from '../../src/definitions/index.ts';
import { DefinitionError, maxListedProblems } from '../../src/errors.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { manyPathsDocument } from './many-paths.ts';

/** The DefinitionError a document is refused with, and how long finding it took. */
function refusal(text: string, file: string): { error: DefinitionError; ms: number } {
  const start = performance.now();
  try {
    parseApiDocument(text, file, assemblyProblems);
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected a DefinitionError, got ${String(error)}`);
    return { error, ms: performance.now() - start };
  }
  assert.fail(`${file} was accepted`);
}

describe('a document with many problems', () => {
  it('lists the first 100 problems in document order and counts all of them', () => {
    const { error } = refusal(manyPathsDocument(20_000, true), 'broken.json');
    assert.equal(maxListedProblems, 100);
    assert.equal(error.problems.length, 100);
    assert.equal(error.problemCount, 20_000);
    assert.deepEqual(error.problems[0], {
      path: "$.paths['/items0'].get.parameters[0].type",
      rule: 'required',
      reason: 'type is required',
    });
    assert.equal(error.problems[99].path, "$.paths['/items99'].get.parameters[0].type");
    assert.match(error.message, /^broken\.json: \$\.paths\['\/items0'\]\.get\.parameters\[0\]\.type: /);
    assert.match(error.message, / \(and 19999 more problems\)$/);
    const body = error.toJSON().error;
    assert.equal((body.problems as unknown[]).length, 100);
    assert.equal(body.problemCount, 20_000);
  });

  it('reports the same problems in the same order every time', () => {
    // Problems of every kind of check: schema, references, operation ids, path parameters.
    const document = JSON.parse(manyPathsDocument(300, true)) as { paths: Record<string, { get: object }> };
    for (let index = 0; index < 300; index += 3) {
      document.paths[`/dup${index}/{id}`] = {
        get: { operationId: `get${index}`, responses: { '200': { $ref: `#/responses/missing${index}` } } },
      };
    }
    const text = JSON.stringify(document);
    const first = refusal(text, 'mixed.json').error;
    const second = refusal(text, 'mixed.json').error;
    assert.equal(first.problemCount, 600);
    assert.equal(first.problems.length, 100);
    assert.deepEqual(second.problems, first.problems);
    assert.equal(second.message, first.message);
  });

  it('takes time linear in the number of problems', () => {
    refusal(manyPathsDocument(200, true), 'warm-up.json');
    const small = refusal(manyPathsDocument(2_000, true), 'small.json').ms;
    const large = refusal(manyPathsDocument(20_000, true), 'large.json').ms;
    // Ten times the problems: about ten times the time when linear, a hundred when quadratic.
    assert.ok(
      large < 30 * small + 500,
      `2,000 problems took ${small.toFixed(0)} ms, 20,000 took ${large.toFixed(0)} ms`,
    );
    assert.ok(large < 10_000, `20,000 problems took ${large.toFixed(0)} ms`);
  });
});
