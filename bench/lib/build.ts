/**
 * Node targets run compiled, as docs/operations.md advises for production: `npm run bench`
 * compiles src/, samples/ and bench/ to dist/ first (tsconfig.bench.json, plus the assets the
 * compiled code reads), and every Node process it starts — backends, peers, Portico — runs plain
 * JavaScript without the tsx loader (about 60 MB of RSS per process, and start-up time).
 * `--source` runs them through tsx instead, from the TypeScript files.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// This file runs from bench/lib/ (tsx) or, compiled, from dist/bench/lib/: the repository is two
// or three folders up.
const root = fileURLToPath(new URL(import.meta.url.endsWith('.js') ? '../../../' : '../../', import.meta.url));
const benchDir = join(root, 'bench');

export type BuildKind = 'compiled' | 'source';

/** Compiles the bench build into dist/; throws with tsc's output when it fails. */
export function compileForBench(): void {
  const tsc = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.bench.json')],
    { cwd: root, encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`bench build failed (tsc -p tsconfig.bench.json):\n${tsc.stdout}${tsc.stderr}`);
  const assets = spawnSync(process.execPath, [join(root, 'scripts/copy-assets.js')], {
    cwd: root,
    encoding: 'utf8',
  });
  if (assets.status !== 0) throw new Error(`bench build failed (scripts/copy-assets.js):\n${assets.stderr}`);
}

/**
 * The node arguments that run a bench file (`portico-target.ts`, `peers/http-proxy.ts`…) as built,
 * with lib/loop-stats preloaded (it does nothing unless BENCH_LOOP_STATS is set).
 */
export function benchScript(kind: BuildKind, file: string): string[] {
  if (kind === 'source')
    return [
      '--import',
      'tsx',
      '--import',
      pathToFileURL(join(benchDir, 'lib', 'loop-stats.ts')).href,
      join(benchDir, file),
    ];
  const built = (name: string) => join(root, 'dist', 'bench', name.replace(/\.ts$/, '.js'));
  return ['--import', pathToFileURL(built('lib/loop-stats.ts')).href, built(file)];
}

/** The node arguments of the `portico` command as built. */
export function porticoCommand(kind: BuildKind): string[] {
  return kind === 'source' ? [join(root, 'bin', 'portico.js')] : [join(root, 'dist', 'src', 'cli', 'main.js')];
}
