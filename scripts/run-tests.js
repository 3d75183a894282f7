#!/usr/bin/env node
// Runs the test suites with Node's own runner, each file in its own process
// (`node --import tsx --test <file>`). Node 20 does not expand globs given to `--test`, so this
// finds `test/**/*.test.ts` itself. Arguments narrow the run to files or folders:
// `npm test -- test/store`.
//
// Two phases, to keep the suite short on two cores: first every file not listed in
// scripts/serial-tests.js, PORTICO_TEST_CONCURRENCY (default 2) at a time; then the listed
// files, alone, one after the other. A file's output is printed whole when it ends, so files
// running together do not interleave. The exit code is 1 when any file fails.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { serialTests } from './serial-tests.js';

function findTests(path) {
  if (!existsSync(path)) {
    console.error(`no such file or folder: ${path}`);
    process.exit(1);
  }
  if (statSync(path).isFile()) return path.endsWith('.test.ts') ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'fixtures' && entry.name !== 'node_modules')
    .flatMap((entry) => findTests(join(path, entry.name)));
}

const stale = [...serialTests.keys()].filter((file) => !existsSync(file));
if (stale.length > 0) {
  console.error(`scripts/serial-tests.js lists files that do not exist: ${stale.join(', ')}`);
  process.exit(1);
}

const concurrency = Number(process.env.PORTICO_TEST_CONCURRENCY ?? 2);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(
    `PORTICO_TEST_CONCURRENCY must be a whole number of 1 or more, not ${process.env.PORTICO_TEST_CONCURRENCY}`,
  );
  process.exit(1);
}

const roots = process.argv.slice(2);
const files = [
  ...new Set(
    (roots.length > 0 ? roots : ['test'])
      .flatMap(findTests)
      .map((f) => relative('.', f))
      .sort(),
  ),
];
if (files.length === 0) {
  console.error(`no test files found under ${roots.join(' ') || 'test'}`);
  process.exit(1);
}

// The reporter colours its output only on a terminal; the children write to a pipe.
const env = process.stdout.isTTY && !('NO_COLOR' in process.env) ? { ...process.env, FORCE_COLOR: '1' } : process.env;

/** Runs one file; resolves with its exit status, duration and everything it printed. */
function runFile(file) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(`${error.stack}\n`)));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString();
      // The counters of the summary (`ℹ pass 12`), without the colours' escape codes.
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      resolve({ file, ok: code === 0, code: code ?? signal, ms: Date.now() - started, output, plain });
    });
  });
}

const results = [];

function report(result) {
  results.push(result);
  const status = result.ok ? 'ok' : `FAILED (exit ${result.code})`;
  process.stdout.write(`\n# ${result.file}\n${result.output}`);
  process.stdout.write(`# ${result.file}: ${status} in ${(result.ms / 1000).toFixed(1)} s\n`);
}

/** Runs `queue` with at most `limit` files at once. */
async function runPool(queue, limit) {
  const pending = [...queue];
  const worker = async () => {
    for (let file = pending.shift(); file !== undefined; file = pending.shift()) report(await runFile(file));
  };
  await Promise.all(Array.from({ length: Math.min(limit, pending.length) }, worker));
}

const started = Date.now();
const parallel = files.filter((file) => !serialTests.has(file));
const serial = files.filter((file) => serialTests.has(file));
if (parallel.length > 0) {
  console.log(`# ${parallel.length} test file(s), ${concurrency} at a time`);
  await runPool(parallel, concurrency);
}
if (serial.length > 0) {
  console.log(`\n# ${serial.length} test file(s) one at a time (scripts/serial-tests.js)`);
  await runPool(serial, 1);
}

/** Sums a counter the spec reporter prints at the end of each file (`ℹ pass 12`). */
const total = (name) =>
  results.reduce((sum, r) => sum + Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(r.plain)?.[1] ?? 0), 0);
const failed = results.filter((r) => !r.ok);
console.log(
  `\n# ${results.length} files, ${total('tests')} tests: ${total('pass')} passed, ${total('fail')} failed, ` +
    `${total('cancelled')} cancelled, in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
console.log(
  `# slowest: ${[...results]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 5)
    .map((r) => `${r.file} ${(r.ms / 1000).toFixed(1)} s`)
    .join(', ')}`,
);
if (failed.length > 0) {
  console.log(`# failed files:\n${failed.map((r) => `#   ${r.file} (exit ${r.code})`).join('\n')}`);
  process.exit(1);
}
