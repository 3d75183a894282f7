/**
 * docs/architecture.md "Worked example: adding a policy", followed literally: the module written
 * there is taken from the page, added to the registry, and then imported, compiled and run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { assemblyProblems } from '../../src/policies/check-assembly.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import type { PolicyRegistry } from '../../src/policies/registry.ts';
import type { PolicyType } from '../../src/policies/types.ts';
import type { PolicyCompileError } from '../../src/policies/types.ts';
import { apiInput, makeContext } from './helpers.ts';

const page = readFileSync(resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
const example = page.split('### Worked example: adding a policy')[1];
const moduleSource = /```ts\n(\/\/ src\/policies\/drop-headers\.ts\n[^]*?)```/.exec(example ?? '')?.[1];

// The page's module, with its imports pointed at src/policies/ (it is written for that folder).
const folder = mkdtempSync(join(tmpdir(), 'portico-worked-example-'));
const policies = pathToFileURL(resolve(import.meta.dirname, '../../src/policies')).href;
writeFileSync(join(folder, 'drop-headers.ts'), (moduleSource ?? '').replaceAll("from './", `from '${policies}/`));
const { dropHeadersPolicy } = (await import(pathToFileURL(join(folder, 'drop-headers.ts')).href)) as {
  dropHeadersPolicy: PolicyType;
};
const registry: PolicyRegistry = Object.freeze({ ...policyRegistry, 'drop-headers': dropHeadersPolicy });

describe('the worked example of docs/architecture.md', () => {
  after(() => rmSync(folder, { recursive: true, force: true }));

  test('the page holds the module', () => {
    assert.ok(moduleSource, 'a ts block starting with // src/policies/drop-headers.ts');
    assert.equal(dropHeadersPolicy.name, 'drop-headers');
  });

  test('its block imports, compiles with its default and runs', async () => {
    const assembly = { execute: [{ 'drop-headers': { headers: ['X-Internal'] } }, { 'drop-headers': {} }] };
    assert.deepEqual(assemblyProblems(assembly, {}, [], undefined, registry), []);
    const step = compileAssembly(assembly, apiInput({}), registry);
    const ctx = makeContext();
    ctx.set('message.headers.x-internal', 'secret');
    ctx.set('message.headers.x-kept', 'yes');
    await step(ctx);
    assert.equal(ctx.get('message.headers.x-internal'), undefined);
    assert.equal(ctx.get('message.headers.x-kept'), 'yes');
  });

  test('its check refuses the same block at import and at the gateway', () => {
    const assembly = { execute: [{ 'drop-headers': { headers: ['bad name'] } }] };
    const path = '$.x-ibm-configuration.assembly.execute[0].drop-headers.headers';
    assert.deepEqual(
      assemblyProblems(assembly, {}, [], undefined, registry).map((p) => [p.path, p.rule]),
      [[path, 'header-name']],
    );
    assert.throws(
      () => compileAssembly(assembly, apiInput({}), registry),
      // The module under test loaded its own copy of types.ts from a file URL: compare by name.
      (error: unknown) =>
        (error as PolicyCompileError).name === 'PolicyCompileError' &&
        (error as PolicyCompileError).path === path &&
        (error as PolicyCompileError).rule === 'header-name',
    );
  });

  test('an unknown field is refused by its schema, as for every policy', () => {
    const problems = assemblyProblems(
      { execute: [{ 'drop-headers': { header: ['x'] } }] },
      {},
      [],
      undefined,
      registry,
    );
    assert.deepEqual(
      problems.map((p) => p.rule),
      ['unknown-field'],
    );
  });
});
