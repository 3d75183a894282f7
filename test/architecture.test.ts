/**
 * Issue 17, item 3: the folders of src/ import one way. Reads every import of src/ (static and
 * dynamic, type imports too) and checks the rules of docs/architecture.md, so a folder loop
 * fails here instead of in review.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const importPattern = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * Every relative import of src/, as `from → to` paths relative to src/. `loadsAtStart` is false
 * for a dynamic `import()` and for an `import type`/`export type` (erased): what loading `from`
 * does not load.
 */
function importGraph(): Array<{ from: string; to: string; loadsAtStart: boolean }> {
  return sourceFiles(src).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(importPattern)]
      .map((m) => ({
        specifier: m[1] ?? m[2],
        loadsAtStart: m[1] !== undefined && !/^\s*(?:import|export) type\s/.test(m[0]),
      }))
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ specifier, loadsAtStart }) => ({
        from: relative(src, file),
        to: relative(src, resolve(dirname(file), specifier)),
        loadsAtStart,
      }));
  });
}

const graph = importGraph();

/** The imports from files under `from` into files under any of `into`, as "a → b" lines. */
function crossings(from: string, into: string[]): string[] {
  return graph
    .filter((edge) => edge.from.startsWith(`${from}/`) && into.some((folder) => edge.to.startsWith(`${folder}/`)))
    .map((edge) => `${edge.from} → ${edge.to}`);
}

test('the import graph is read (a sanity check on the reader)', () => {
  assert.ok(graph.length > 300, `only ${graph.length} imports found`);
  assert.ok(graph.some((edge) => edge.from === 'portal/server.ts' && edge.to === 'web/web-session.ts'));
  assert.ok(
    graph.some((edge) => edge.from === 'platform.ts' && edge.to === 'portal/server.ts'),
    'dynamic imports are read',
  );
});

test('the portal imports nothing from the management plane', () => {
  assert.deepEqual(crossings('portal', ['management']), []);
});

test('the management plane and console import nothing from the portal', () => {
  assert.deepEqual(crossings('management', ['portal']), []);
});

test('src/web, shared by portal and console, imports neither', () => {
  assert.deepEqual(crossings('web', ['portal', 'management']), []);
});

test('the portal uses consumer services only; management and console provider services only', () => {
  const provider = ['services/provider', 'services/provider-services.ts'];
  const consumer = ['services/consumer', 'services/consumer-services.ts'];
  const into = (from: string, targets: string[]) =>
    graph.filter((e) => e.from.startsWith(`${from}/`) && targets.some((t) => e.to === t || e.to.startsWith(`${t}/`)));
  assert.deepEqual(
    into('portal', provider).map((e) => `${e.from} → ${e.to}`),
    [],
  );
  assert.deepEqual(
    into('management', consumer).map((e) => `${e.from} → ${e.to}`),
    [],
  );
});

test('services import no web app (portal, management) ', () => {
  assert.deepEqual(crossings('services', ['portal', 'management']), []);
});

test('the gateway and the policies import no management, portal, web or services code', () => {
  const above = ['management', 'portal', 'web', 'services'];
  assert.deepEqual([...crossings('gateway', above), ...crossings('policies', above)], []);
});

test('store queries stay in src/store and src/services: the web apps and the CLI never reach the database', () => {
  const direct = sourceFiles(src)
    .map((file) => relative(src, file))
    .filter((file) => /^(portal|management|web|cli)\//.test(file))
    .filter((file) =>
      /\bstore\.db\b|from ['"]kysely['"]|\.selectFrom\(|\.updateTable\(|\.insertInto\(|\.deleteFrom\(/.test(
        readFileSync(join(src, file), 'utf8'),
      ),
    );
  // Housekeeping purges old rows on a timer, off any request (management/housekeeping.ts).
  assert.deepEqual(direct, ['management/housekeeping.ts']);
});

/** Definitions only parse documents: policies own their schemas and checks (issue 17, item 2). */
test('definitions import nothing from policies', () => {
  assert.deepEqual(crossings('definitions', ['policies']), []);
});

/** Small modules (issue 17): no source file over 350 lines, schema data excepted. */
test('no source file over 350 lines, schema data excepted', () => {
  const schemaData = new Set(['definitions/openapi-schemas.ts', 'store/schema.ts']);
  const long = sourceFiles(src)
    .map((file) => ({ file: relative(src, file), lines: readFileSync(file, 'utf8').split('\n').length }))
    .filter((entry) => entry.lines > 350 && !schemaData.has(entry.file))
    .map((entry) => `${entry.file} (${entry.lines})`);
  assert.deepEqual(long, []);
});

/** src/http holds what the gateway and the policies share (the bounded body reader): it imports neither. */
test('src/http imports nothing from the gateway or the policies', () => {
  assert.deepEqual(crossings('http', ['gateway', 'policies']), []);
});

/** The files loading `start` loads before any of its code runs: its static, non-type imports, followed. */
function loadedAtStart(start: string): Set<string> {
  const loaded = new Set([start]);
  for (const file of loaded) {
    for (const edge of graph) if (edge.from === file && edge.loadsAtStart) loaded.add(edge.to);
  }
  return loaded;
}

/**
 * Every `portico` command but serve and demo calls a management server: starting the CLI loads
 * no store (kysely, better-sqlite3, pg: half a second of a command's start) and no platform.
 */
test('the CLI loads no store and no platform until serve or demo runs', () => {
  const loaded = loadedAtStart('cli/main.ts');
  assert.ok(loaded.has('cli/commands/run.ts') && loaded.has('cli/client.ts'), 'the reader follows main.ts');
  const heavy = [...loaded].filter(
    (file) => file.startsWith('store/') || file === 'platform.ts' || file === 'cli/serve.ts',
  );
  assert.deepEqual(heavy, []);
});
