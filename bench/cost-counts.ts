/**
 * What one gateway call costs, in counts that do not move with the machine's load: bytes
 * allocated per request (from V8's `--trace-gc` lines) and, with `--instructions`, instructions
 * executed per request (valgrind's callgrind, split into garbage collection, compilation and the
 * rest). CPU time per request moves by 20 % between runs on a shared machine; these counts move
 * by a few percent, so two builds can be compared on any machine (bench/README.md, Session 17).
 *
 * node --import tsx bench/cost-counts.ts [--dist DIR] [--mode full|pass] [--requests N]
 *   [--warm N] [--instructions]
 *
 * `--dist` is a compiled build (`npx tsc -p tsconfig.bench.json && node scripts/copy-assets.js`
 * writes dist/; an older commit's build comes from a `git worktree` with node_modules linked).
 * The load is closed-loop over keep-alive connections (cost, not latency, is measured). Under
 * callgrind the gateway runs ~50× slower: `--instructions` takes minutes; its instrumentation
 * is switched on only for the measured requests (`callgrind_control -i on`), after the warm-up.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startProcess } from './lib/processes.ts';
import type { Running } from './lib/processes.ts';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: resolve(import.meta.dirname, import.meta.url.endsWith('.js') ? '..' : '../dist') },
    mode: { type: 'string', default: 'full' },
    requests: { type: 'string' },
    warm: { type: 'string' },
    instructions: { type: 'boolean', default: false },
  },
});
const instructions = args.instructions;
const requests = Number(args.requests ?? (instructions ? 1500 : 40_000));
const warm = Number(args.warm ?? (instructions ? 3000 : 20_000));
const concurrency = instructions ? 4 : 8;

interface Started {
  running: Running;
  path: string;
  headers: Record<string, string>;
  /** Every stdout line so far (V8's `--trace-gc` records among them). */
  lines: string[];
}

/** Starts a bench process (unpinned) and waits for its handshake line (bench/lib/announce.ts). */
async function start(name: string, command: string, argv: string[], env: Record<string, string>): Promise<Started> {
  const lines: string[] = [];
  const running = await startProcess({
    name,
    cpus: undefined,
    command,
    args: argv,
    env,
    ready: { kind: 'announce' },
    timeoutMs: 600_000, // under callgrind the gateway starts ~50× slower
    onLine: (line) => lines.push(line),
  });
  const { path = '/', headers = {} } = running.announcement;
  return { running, path, headers, lines };
}

async function load(target: Started, count: number): Promise<Record<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = () =>
    new Promise<number>((done, fail) => {
      const options = {
        host: '127.0.0.1',
        port: target.running.port,
        path: target.path,
        headers: target.headers,
        agent,
      };
      http.get(options, (res) => res.resume().on('end', () => done(res.statusCode!))).on('error', fail);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const status = await one();
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return statuses;
}

/** MB allocated between the window's first and last collection, from `--trace-gc` lines. */
function allocatedMb(lines: string[]): { mb: number; scavenges: number; majors: number } {
  let mb = 0;
  let scavenges = 0;
  let majors = 0;
  let after: number | undefined;
  for (const line of lines) {
    const m = /: (Scavenge|Mark-Compact|Mark-Compact \(reduce\))\b\D*([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(/.exec(line);
    if (!m) continue;
    if (m[1] === 'Scavenge') scavenges++;
    else majors++;
    if (after !== undefined) mb += Number(m[2]) - after;
    after = Number(m[4]);
  }
  return { mb, scavenges, majors };
}

/** callgrind's totals by category (garbage collection, compilation, everything else). */
function instructionSplit(file: string): Record<string, number> {
  const text = execFileSync('callgrind_annotate', ['--threshold=100', file], { maxBuffer: 1 << 28 }).toString();
  const split: Record<string, number> = { gc: 0, compile: 0, run: 0 };
  for (const line of text.split('\n')) {
    const m = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.*)$/.exec(line);
    if (!m || m[2].includes('PROGRAM TOTALS')) continue;
    const count = Number(m[1].replaceAll(',', ''));
    const where = m[2];
    if (
      /Mark|Sweep|Evacuat|Scaveng|heap::|MemoryChunk|Heap::|GCTracer|IteratePointers|Slot|Remembered|ObjectCache|ActiveSystemPages|MinorMC/.test(
        where,
      )
    )
      split.gc += count;
    else if (
      /compiler::|maglev|turboshaft|Compil|Parser|Scanner|BytecodeGen|interpreter::|Zone|Typer|Deoptim/.test(where)
    )
      split.compile += count;
    else split.run += count;
  }
  return split;
}

const scratch = mkdtempSync(join(tmpdir(), 'portico-cost-counts-'));
const built = (name: string) => join(args.dist, 'bench', name);
if (!existsSync(built('portico-target.js'))) throw new Error(`no compiled build at ${args.dist} (see the header)`);
const backend = await start('backend', process.execPath, [built('backend.js')], {});
const targetEnv = {
  BENCH_MODE: args.mode,
  BENCH_UPSTREAM_PORT: String(backend.running.port),
  PORTICO_LOG_LEVEL: 'warn',
};
const out = join(scratch, 'callgrind.out');
const target = instructions
  ? await start(
      'portico',
      'valgrind',
      ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', '--separate-threads=yes']
        .concat([`--callgrind-out-file=${out}`])
        .concat([process.execPath, built('portico-target.js')]),
      targetEnv,
    )
  : await start('portico', process.execPath, ['--trace-gc', built('portico-target.js')], targetEnv);
try {
  const warmed = await load(target, warm);
  const from = target.lines.length;
  if (instructions) execFileSync('callgrind_control', ['-i', 'on', String(target.running.pid)], { stdio: 'ignore' });
  const statuses = await load(target, requests);
  if (instructions) execFileSync('callgrind_control', ['-i', 'off', String(target.running.pid)], { stdio: 'ignore' });
  const result: Record<string, unknown> = { dist: args.dist, mode: args.mode, warm: warmed, statuses };
  if (instructions) {
    await target.running.stop();
    // One file per thread (`-01` is the main thread, the event loop): the others are V8's
    // compiler and GC helper threads and libuv's pool, whose share of a window follows timing.
    const files = readdirSync(scratch).filter((name) => /^callgrind\.out.*-\d+$/.test(name));
    const perRequest = (n: number) => Math.round(n / requests);
    const main = { gc: 0, compile: 0, run: 0 };
    let others = 0;
    for (const name of files) {
      const part = instructionSplit(join(scratch, name));
      if (name.endsWith('-01')) for (const key of Object.keys(main) as Array<keyof typeof main>) main[key] += part[key];
      else others += part.gc + part.compile + part.run;
    }
    result.instructionsPerRequest = {
      mainThread: perRequest(main.gc + main.compile + main.run),
      mainRun: perRequest(main.run),
      mainGc: perRequest(main.gc),
      mainCompile: perRequest(main.compile),
      otherThreads: perRequest(others),
    };
  } else {
    const { mb, scavenges, majors } = allocatedMb(target.lines.slice(from));
    result.allocatedBytesPerRequest = Math.round((mb * 1024 * 1024) / requests);
    result.scavengesPer10k = Number(((scavenges * 10_000) / requests).toFixed(1));
    result.majorCollections = majors;
  }
  console.log(JSON.stringify(result));
} finally {
  await target.running.stop();
  await backend.running.stop();
  rmSync(scratch, { recursive: true, force: true });
}
