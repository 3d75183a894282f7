/**
 * A map's `value` expressions are checked at import as conditions are: JSONata that does not
 * parse, or a regex literal the linear engine cannot match, is refused when the API is imported
 * (naming the action), not first at publish (fail closed at import; the map was accepted at
 * import and refused only at publish before). So is a set-variable action whose variable name
 * would reach a prototype, or whose literal value does not convert to its type.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseApiDocument } from '../../src/definitions/index.ts';
import { DefinitionError } from '../../src/errors.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';

function apiWithMap(actions: unknown[]): string {
  const map = {
    version: '2.0.0',
    inputs: { input: { schema: { type: 'object' }, variable: 'request.body' } },
    outputs: { output: { schema: { type: 'object' }, variable: 'message.body' } },
    actions,
  };
  return apiWith({ map });
}

function apiWith(entry: Record<string, unknown>): string {
  return JSON.stringify({
    swagger: '2.0',
    info: { title: 'mapped', version: '1.0.0', 'x-ibm-name': 'mapped' },
    basePath: '/mapped',
    security: [],
    paths: { '/a': { post: { responses: { '200': { description: 'ok' } } } } },
    'x-ibm-configuration': { assembly: { execute: [entry] } },
  });
}

function problemOf(text: string): { path: string; rule: string; reason: string } {
  try {
    parseApiDocument(text, 'mapped.json', assemblyProblems);
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    return error.problems[0] as { path: string; rule: string; reason: string };
  }
  assert.fail('the import was accepted');
}

describe('map values checked at import', () => {
  test('a regex literal the linear engine refuses, in an action value', () => {
    const problem = problemOf(
      apiWithMap([{ set: 'output.x', from: 'input.x', value: '$match($string($), /(a)\\1/)' }]),
    );
    assert.equal(problem.path, '$.x-ibm-configuration.assembly.execute[0].map.actions[0].value');
    assert.match(problem.reason, /backreference/);
  });

  test('JSONata that does not parse, in a nested foreach action', () => {
    const problem = problemOf(
      apiWithMap([
        { set: 'output.list', foreach: 'input.items', actions: [{ set: 'name', from: 'name', value: '$uppercase(' }] },
      ]),
    );
    assert.equal(problem.path, '$.x-ibm-configuration.assembly.execute[0].map.actions[0].actions[0].value');
    assert.equal(problem.rule, 'expression-syntax');
  });

  test('a map whose values are sound imports', () => {
    const text = apiWithMap([
      { set: 'output.x', from: 'input.x', value: '$uppercase($)' },
      { set: 'output.y', from: 'input.y', value: '$match($string($), /a+b/) ? "yes" : "no"' },
    ]);
    assert.equal(parseApiDocument(text, 'mapped.json', assemblyProblems).name, 'mapped');
  });
});

describe('set-variable actions checked at import', () => {
  const setVariable = (actions: unknown[]) => apiWith({ 'set-variable': { version: '2.0.0', actions } });

  test('a variable name that would reach a prototype', () => {
    const problem = problemOf(setVariable([{ set: 'message.__proto__.polluted', value: '1' }]));
    assert.equal(problem.path, '$.x-ibm-configuration.assembly.execute[0].set-variable.actions[0].set');
    assert.equal(problem.rule, 'variable-name');
  });

  test('a literal value that does not convert to its type', () => {
    const problem = problemOf(setVariable([{ set: 'count', value: 'many', type: 'number' }]));
    assert.equal(problem.path, '$.x-ibm-configuration.assembly.execute[0].set-variable.actions[0].value');
  });

  test('sound actions import, a templated value included', () => {
    const text = setVariable([
      { set: 'message.headers.x-trace', value: '$(request.headers.x-id)' },
      { set: 'count', value: '3', type: 'number' },
    ]);
    assert.equal(parseApiDocument(text, 'mapped.json', assemblyProblems).name, 'mapped');
  });
});
