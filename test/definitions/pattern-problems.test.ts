/**
 * The import rule for regular expressions (src/definitions/pattern-problems.ts): a pattern the
 * gateway could only match by backtracking is refused at import, at the JSON path of the field,
 * wherever a schema holds it; and again at publish for a document stored before the rule.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DefinitionError } from '../../src/errors.ts';
import { parseApiDocument, securityProblems } from '../../src/definitions/index.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';

const ok = { 200: { description: 'ok' } };

function swagger(extra: Record<string, unknown>): Record<string, unknown> {
  return {
    swagger: '2.0',
    info: { title: 'Patterns', version: '1.0.0', 'x-ibm-name': 'patterns' },
    basePath: '/p',
    ...extra,
  };
}

function problemsOf(document: Record<string, unknown>): Array<{ path: string; rule: string; reason: string }> {
  try {
    parseApiDocument(JSON.stringify(document), 'patterns.json', assemblyProblems);
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    return error.problems;
  }
  return [];
}

describe('the pattern import rule', () => {
  it('refuses a lookahead in a Swagger 2 query parameter, naming the field and the reason', () => {
    const problems = problemsOf(
      swagger({
        paths: {
          '/users': {
            get: {
              parameters: [{ name: 'password', in: 'query', type: 'string', pattern: '^(?=.*\\d).{8,}$' }],
              responses: ok,
            },
          },
        },
      }),
    );
    assert.deepEqual(problems, [
      {
        path: "$.paths['/users'].get.parameters[0].pattern",
        rule: 'unsupported-pattern',
        reason: 'a lookahead (?= or (?! cannot be matched in linear time',
      },
    ]);
  });

  it('refuses patterns in definitions, nested items, patternProperties keys and OpenAPI 3 components', () => {
    const v2 = problemsOf(
      swagger({
        paths: {},
        definitions: {
          Order: {
            type: 'object',
            properties: {
              // A property named like a keyword is a schema all the same.
              example: { type: 'string', pattern: '^(a)\\1$' },
              tags: { type: 'array', items: { type: 'string', pattern: '^a{2000}$' } },
            },
            patternProperties: { '^x-(?!ibm)': { type: 'string' } },
          },
        },
      }),
    );
    assert.deepEqual(
      v2.map((problem) => [problem.path, problem.rule]),
      [
        ['$.definitions.Order.properties.example.pattern', 'unsupported-pattern'],
        ['$.definitions.Order.properties.tags.items.pattern', 'unsupported-pattern'],
        ["$.definitions.Order.patternProperties['^x-(?!ibm)']", 'unsupported-pattern'],
      ],
    );
    const v3 = problemsOf({
      openapi: '3.0.3',
      info: { title: 'Patterns', version: '1.0.0', 'x-ibm-name': 'patterns' },
      paths: {},
      components: { schemas: { Code: { type: 'string', pattern: '^([a-z]$' } } },
    });
    assert.deepEqual(
      v3.map((problem) => [problem.path, problem.rule]),
      [['$.components.schemas.Code.pattern', 'pattern-syntax']],
    );
  });

  it('accepts the patterns providers write, and leaves `pattern` inside examples and extensions alone', () => {
    const problems = problemsOf(
      swagger({
        paths: {
          '/zip/{code}': {
            get: {
              parameters: [{ name: 'code', in: 'path', required: true, type: 'string', pattern: '^[0-9]{5}$' }],
              responses: ok,
            },
          },
        },
        definitions: {
          Rule: {
            type: 'object',
            properties: { email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$' } },
            example: { pattern: '(?=not a schema)' },
            'x-notes': { pattern: '\\1' },
          },
        },
      }),
    );
    assert.deepEqual(problems, []);
  });

  it('refuses at publish a stored document the rule did not exist for', () => {
    const stored = swagger({
      paths: {
        '/q': {
          get: { parameters: [{ name: 'q', in: 'query', type: 'string', pattern: '^(\\w+)\\s\\1$' }], responses: ok },
        },
      },
    });
    assert.deepEqual(
      securityProblems(stored).map((problem) => [problem.path, problem.rule]),
      [["$.paths['/q'].get.parameters[0].pattern", 'unsupported-pattern']],
    );
  });
});
