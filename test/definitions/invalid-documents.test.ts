import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DefinitionError, PorticoError } from '../../src/errors.ts';
import { parseApiDocument as parseDocument, parseProductDocument } from '../../src/definitions/index.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { fixture } from './fixtures.ts';

/** The API document parser with the policies' assembly check, as the management plane runs it. */
const parseApiDocument = (text: string, file: string) => parseDocument(text, file, assemblyProblems);

/** The [path, rule] pairs of the DefinitionError thrown for a broken fixture. */
function problemsOf(
  name: string,
  parse: (text: string, file: string) => unknown = parseApiDocument,
): Array<[string, string]> {
  try {
    parse(fixture(`broken/${name}`), `broken/${name}`);
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected a DefinitionError, got ${String(error)}`);
    assert.equal(error.code, 'DEF_INVALID');
    assert.equal(error.file, `broken/${name}`);
    return error.problems.map((problem) => [problem.path, problem.rule]);
  }
  assert.fail(`${name} was accepted`);
}

const policyPath = '$.x-ibm-configuration.assembly.execute';

describe('malformed text', () => {
  it('reports a YAML syntax error with its line and column', () => {
    assert.throws(
      () => parseApiDocument(fixture('broken/malformed.yaml'), 'malformed.yaml'),
      (error: PorticoError) => {
        assert.ok(error instanceof PorticoError);
        assert.equal(error.code, 'DEF_PARSE');
        assert.equal(error.params.format, 'YAML');
        assert.equal(error.params.line, 8);
        assert.match(error.message, /^malformed\.yaml: cannot be parsed as YAML: line 8, column 3: /);
        return true;
      },
    );
  });

  it('reports a JSON syntax error with its line', () => {
    assert.throws(
      () => parseApiDocument(fixture('broken/malformed.json'), 'malformed.json'),
      (error: PorticoError) => {
        assert.equal(error.code, 'DEF_PARSE');
        assert.equal(error.params.format, 'JSON');
        assert.equal(error.params.line, 4);
        assert.match(error.message, /cannot be parsed as JSON: line 4, column \d+: /);
        return true;
      },
    );
  });

  it('refuses duplicate keys in YAML', () => {
    assert.throws(() => parseApiDocument("swagger: '2.0'\nswagger: '2.0'\n", 'dup.yaml'), {
      code: 'DEF_PARSE',
      params: {
        file: 'dup.yaml',
        format: 'YAML',
        reason: 'line 2, column 1: Map keys must be unique',
        line: 2,
        column: 1,
      },
    });
  });

  it('refuses a document that is not an object', () => {
    assert.throws(
      () => parseApiDocument('- a\n- b\n', 'list.yaml'),
      (error: DefinitionError) => error.problems[0].path === '$' && error.problems[0].rule === 'type',
    );
  });
});

describe('API document problems', () => {
  it('names an unknown policy', () => {
    assert.deepEqual(problemsOf('unknown-policy.yaml'), [[`${policyPath}[1].ratelimit-basic`, 'unknown-policy']]);
  });

  it('names mistyped fields deep inside an operation-switch case', () => {
    const invoke = `${policyPath}[0].operation-switch.case[1].execute[0].invoke`;
    assert.deepEqual(problemsOf('wrong-field-type.yaml'), [
      [`${invoke}.verb`, 'enum'],
      [`${invoke}.timeout`, 'type'],
    ]);
  });

  it('refuses an unknown field on invoke, suggesting nothing for a field that resembles none', () => {
    assert.deepEqual(problemsOf('unknown-invoke-field.yaml'), [[`${policyPath}[0].invoke.retries`, 'unknown-field']]);
  });

  it('suggests the closest field for a typo', () => {
    const text = fixture('broken/unknown-invoke-field.yaml').replace('retries: 3', 'timout: 3');
    assert.throws(
      () => parseApiDocument(text, 'typo.yaml'),
      (error: DefinitionError) => error.problems[0].reason === 'unknown field timout (did you mean timeout?)',
    );
  });

  it('names every unresolved $ref, in paths and in map inputs and outputs', () => {
    assert.deepEqual(problemsOf('unresolved-ref.yaml'), [
      ["$.paths['/a'].get.responses['200'].schema.$ref", 'unresolved-ref'],
      [`${policyPath}[0].map.inputs.xyz.schema.$ref`, 'unresolved-ref'],
      [`${policyPath}[0].map.outputs.output.schema.$ref`, 'unresolved-ref'],
    ]);
  });

  it('refuses a duplicate operationId at its second use', () => {
    assert.deepEqual(problemsOf('duplicate-operation-id.yaml'), [
      ["$.paths['/b'].get.operationId", 'duplicate-operation-id'],
    ]);
  });

  it('names operation-switch cases that reference missing operations, by id and by verb and path', () => {
    const operations = `${policyPath}[0].operation-switch.case[1].operations`;
    assert.deepEqual(problemsOf('unknown-operation.yaml'), [
      [`${operations}[0]`, 'unknown-operation'],
      [`${operations}[1]`, 'unknown-operation'],
    ]);
  });

  it('refuses a policy version the policy does not have', () => {
    assert.deepEqual(problemsOf('bad-policy-version.yaml'), [
      [`${policyPath}[0].gatewayscript.version`, 'unsupported-version'],
    ]);
  });

  it('refuses an activity-log content level outside none, activity, header, payload', () => {
    assert.deepEqual(problemsOf('bad-activity-log.yaml'), [
      ['$.x-ibm-configuration.activity-log.success-content', 'enum'],
    ]);
  });

  it('requires info.version', () => {
    assert.deepEqual(problemsOf('missing-info-version.yaml'), [['$.info.version', 'required']]);
  });

  it('collects every problem of a document into one error', () => {
    assert.deepEqual(problemsOf('many-problems.yaml'), [
      ["$.paths['/items/{id}'].get.parameters", 'missing-path-parameter'],
      ["$.paths['/items/{id}'].get.security[0].apiKey", 'unknown-security-scheme'],
      ['$.x-ibm-configuration.cors.enabled', 'type'],
      ['$.x-ibm-configuration.assembly.catch[0].errors', 'minItems'],
      ['$.x-ibm-configuration.assembly.catch[1]', 'required'],
      [`${policyPath}[0].invoke.cache-ttl`, 'type'],
      [`${policyPath}[1].if.condition`, 'condition-syntax'],
      [`${policyPath}[1].if.execute[0].operation-switch`, 'invalid-nesting'],
      [`${policyPath}[2].gatewayscript.source`, 'script-syntax'],
      [`${policyPath}[3].set-variable.actions[0]`, 'required'],
      [`${policyPath}[4]`, 'policy-shape'],
    ]);
  });

  it('words the message after the first problem and counts the rest', () => {
    assert.throws(
      () => parseApiDocument(fixture('broken/many-problems.yaml'), 'many.yaml'),
      (error: DefinitionError) => {
        assert.equal(
          error.message,
          "many.yaml: $.paths['/items/{id}'].get.parameters: path parameter id of /items/{id} is not declared (and 10 more problems)",
        );
        assert.equal(error.toJSON().error.rule, 'missing-path-parameter');
        return true;
      },
    );
  });

  it('refuses a path parameter that is not required', () => {
    const text = fixture('inventory-plain.yaml').replace(
      '    required: true\n    type: integer',
      '    required: false\n    type: integer',
    );
    assert.throws(
      () => parseApiDocument(text, 'inventory.yaml'),
      (error: DefinitionError) => {
        assert.deepEqual(
          error.problems.map((problem) => [problem.path, problem.rule]),
          [['$.parameters.itemId.required', 'enum']],
        );
        return true;
      },
    );
  });

  it('refuses a swagger version other than 2.0', () => {
    assert.throws(
      () => parseApiDocument("swagger: '1.2'\n", 'old.yaml'),
      (error: DefinitionError) => error.problems[0].path === '$.swagger' && error.problems[0].rule === 'enum',
    );
  });
});

describe('product document problems', () => {
  it('names each bad rate-limit value', () => {
    assert.deepEqual(problemsOf('bad-rate-limit.yaml', parseProductDocument), [
      ['$.plans.silver.rate-limits.default.value', 'rate-limit-syntax'],
      ['$.plans.gold.burst-limits.spike.value', 'rate-limit-syntax'],
    ]);
  });

  it('collects visibility, plan and api problems', () => {
    assert.deepEqual(problemsOf('product-problems.yaml', parseProductDocument), [
      ['$.visibility.view.type', 'enum'],
      ['$.visibility.subscribe.type', 'enum'],
      ["$.plans['Gold Plan'].approval", 'type'],
      ['$.apis.logistics', 'required'],
      ['$.apis.logistics.file', 'unknown-field'],
      ["$.plans['Gold Plan']", 'plan-name'],
      ["$.plans['Gold Plan'].apis.billing", 'unknown-api'],
      ['$.apis.financing.name', 'api-reference'],
    ]);
  });

  it('refuses a plan limited to some operations of an API (the gateway enforces whole APIs)', () => {
    const text = [
      'product: 1.0.0',
      'info: { name: p, version: 1.0.0 }',
      'plans:',
      '  gold: { apis: { a: { operations: [{ operationId: getThing }] }, b: {} } }',
      "apis: { a: { name: 'a:1.0.0' }, b: { name: 'b:1.0.0' } }",
    ].join('\n');
    assert.throws(
      () => parseProductDocument(text, 'p.yaml'),
      (error: DefinitionError) => {
        assert.equal(error.code, 'DEF_INVALID');
        assert.equal(error.file, 'p.yaml');
        assert.deepEqual(
          error.problems.map((problem) => [problem.path, problem.rule]),
          [['$.plans.gold.apis.a.operations', 'plan-operations']],
        );
        assert.match(error.problems[0].reason, /cannot limit a plan to some operations of an API: list a without/);
        return true;
      },
    );
    const whole = parseProductDocument(text.replace('{ operations: [{ operationId: getThing }] }', '{}'), 'p.yaml');
    assert.deepEqual(whole.plans[0].apis, ['a', 'b']);
  });

  it('requires info.name and info.version', () => {
    assert.throws(
      () => parseProductDocument('product: 1.0.0\ninfo: { title: x }\nplans: { default: {} }\n', 'p.yaml'),
      (error: DefinitionError) => {
        assert.deepEqual(
          error.problems.map((problem) => [problem.path, problem.rule]),
          [
            ['$.info.name', 'required'],
            ['$.info.version', 'required'],
          ],
        );
        return true;
      },
    );
  });
});
