#!/usr/bin/env node
// Runs the test suites with Node's own runner. Node 20 does not expand globs given to
// `--test`, so this finds `test/**/*.test.ts` itself. Arguments narrow the run to files or
// folders: `npm test -- test/store`.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

function findTests(path) {
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'fixtures' && entry.name !== 'node_modules')
    .flatMap((entry) => findTests(join(path, entry.name)));
}

const roots = process.argv.slice(2);
const files = (roots.length > 0 ? roots : ['test'])
  .flatMap(findTests)
  .map((f) => relative('.', f))
  .sort();
if (files.length === 0) {
  console.error(`no test files found under ${roots.join(' ') || 'test'}`);
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
