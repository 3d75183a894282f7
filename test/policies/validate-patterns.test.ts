/**
 * The validate policy's provider-written patterns run on the linear engine: a schema `pattern`,
 * a `patternProperties` key and `format: url` (whose ajv-formats expression backtracks) answer
 * a crafted body at once; a pattern the engine cannot run fails the compile, never the request.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssemblyError, PolicyCompileError } from '../../src/policies/types.ts';
import { compile, makeContext } from './helpers.ts';

function validating(definition: Record<string, unknown>) {
  return compile(
    { execute: [{ validate: { title: 'check', 'validate-against': 'definition', definition: '#/definitions/body' } }] },
    { definitions: { body: definition } },
  );
}

async function refused(step: ReturnType<typeof validating>, body: unknown, rule: RegExp): Promise<void> {
  await assert.rejects(
    async () => step(makeContext({ message: { body } })),
    (error: unknown) => error instanceof AssemblyError && error.status === 422 && rule.test(error.message),
  );
}

describe('validate patterns', () => {
  it("answers the review's pattern on a crafted body string at once", async () => {
    // V8: 5 s at 31 characters, doubling with each one more; the body below has 100.
    const step = validating({
      type: 'object',
      properties: { name: { type: 'string', pattern: '^([A-Za-z0-9]+ ?)*$' } },
    });
    await refused(step, { name: `${'a'.repeat(100)}!` }, /body\/name must match pattern/);
    await step(makeContext({ message: { body: { name: 'Jane Doe 2' } } }));
  });

  it('answers a crafted property name against a patternProperties key at once', async () => {
    const step = validating({
      type: 'object',
      patternProperties: { '^(a+)+$': { type: 'string' } },
      additionalProperties: false,
    });
    await refused(step, { [`${'a'.repeat(40)}!`]: 'x' }, /must NOT have additional properties/);
    await step(makeContext({ message: { body: { aaa: 'x' } } }));
  });

  it('answers format: url on a million-character value at once, with ajv-formats meaning', async () => {
    // ajv-formats' expression is quadratic: 0.47 s at 20 000 characters, ~20 min at a million.
    const step = validating({ type: 'object', properties: { site: { type: 'string', format: 'url' } } });
    await refused(step, { site: `http://${':'.repeat(1_000_000)}!` }, /must match format "url"/);
    await refused(step, { site: 'http://192.168.1.10/admin' }, /must match format "url"/);
    await step(makeContext({ message: { body: { site: 'https://example.com:8443/a?b=c' } } }));
  });

  it('fails the compile on a pattern the linear engine cannot run', () => {
    assert.throws(
      () => validating({ type: 'string', pattern: '^(?!admin).*$' }),
      (error: unknown) =>
        error instanceof PolicyCompileError &&
        error.rule === 'unsupported-pattern' &&
        error.path === '$.x-ibm-configuration.assembly.execute[0].validate.definition' &&
        /lookahead/.test(error.message),
    );
  });
});
