/**
 * What each scavenge of a target costs at issue 18's fixed rate, from V8's own record
 * (`--trace-gc-nvp`): how many, their pause, the bytes that survived and were promoted, per
 * scavenge. The latency run's GC records (bench/run.ts) give pauses only; this says what the
 * pauses are made of, for Portico and for the `node-floor` control side by side
 * (bench/README.md, Session 18).
 *
 * node --import tsx bench/gc-at-rate.ts [--dist DIR] [--target pass|full|node-floor]
 *   [--rate 2000] [--seconds 12] [--warm 4]
 *
 * Placement as bench/run.ts: the backend and the load (hey, `-q` per connection) on core 0, the
 * target alone on core 1. The target runs under `stdbuf -oL` so that V8's trace lines reach this
 * process as they are written (into a pipe they are otherwise held in a 4 KiB buffer), and the
 * load runs asynchronously so the pipe is read while it lasts (a blocked pipe stalls the target).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startProcess } from './lib/processes.ts';
import type { Running } from './lib/processes.ts';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: resolve(import.meta.dirname, import.meta.url.endsWith('.js') ? '..' : '../dist') },
    target: { type: 'string', default: 'pass' },
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '12' },
    warm: { type: 'string', default: '4' },
  },
});
const run = promisify(execFile);
const connections = 20;
const rate = Number(args.rate);

interface Started {
  running: Running;
  path: string;
  headers: Record<string, string>;
  lines: string[];
}

/** Starts `argv` pinned to `core`, V8's output line-buffered, every stdout line kept. */
async function start(name: string, core: string, argv: string[], env: Record<string, string>): Promise<Started> {
  const lines: string[] = [];
  const running = await startProcess({
    name,
    cpus: core,
    command: 'stdbuf',
    args: ['-oL', process.execPath, ...argv],
    env,
    ready: { kind: 'announce' },
    onLine: (line) => lines.push(line),
  });
  const { path = '/bench/sandbox/bench/item', headers = {} } = running.announcement;
  return { running, path, headers, lines };
}

/** hey at `rate` req/s (or as fast as it goes without one) for `seconds`; its summary text. */
async function hey(target: Started, seconds: number, fixed: boolean): Promise<string> {
  const headers = Object.entries(target.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const pace = fixed ? ['-q', String(rate / connections)] : [];
  const url = `http://127.0.0.1:${target.running.port}${target.path}`;
  const argv = ['-c', '0', 'hey', '-z', `${seconds}s`, '-c', String(connections), ...pace, ...headers, url];
  return (await run('taskset', argv, { maxBuffer: 1 << 24 })).stdout;
}

/** Means over the scavenges among `lines` (`--trace-gc-nvp`'s `key=value` fields). */
function scavenges(lines: string[]) {
  const records = lines.filter((line) => line.includes(' gc=s '));
  const mean = (key: string) => {
    const pattern = new RegExp(`\\b${key.replace('.', '\\.')}=([\\d.]+)`);
    const sum = records.reduce((total, line) => total + Number(pattern.exec(line)?.[1] ?? NaN), 0);
    return records.length === 0 ? undefined : sum / records.length;
  };
  const round = (value: number | undefined, digits: number) =>
    value === undefined ? undefined : Number(value.toFixed(digits));
  return {
    count: records.length,
    pauseMs: round(mean('pause'), 3),
    parallelMs: round(mean('scavenge.parallel'), 3),
    rootsMs: round(mean('scavenge.roots'), 3),
    sweepArrayBuffersMs: round(mean('scavenge.sweep_array_buffers'), 3),
    survivedBytes: round(mean('new_space_survived'), 0),
    promotedBytes: round(mean('promoted'), 0),
    allocatedBytesBetween: round(mean('allocated'), 0),
  };
}

const built = (name: string) => join(args.dist, 'bench', name);
if (!existsSync(built('portico-target.js')))
  throw new Error(`no compiled build at ${args.dist} (bench/cost-counts.ts's header)`);
const backend = await start('backend', '0', [built('backend.js')], {});
const env = { BENCH_UPSTREAM_PORT: String(backend.running.port), PORTICO_LOG_LEVEL: 'warn', BENCH_MODE: args.target };
const script = args.target === 'node-floor' ? built('peers/node-floor.js') : built('portico-target.js');
const target = await start(args.target, '1', ['--trace-gc-nvp', script], env);
try {
  await hey(target, Number(args.warm), false);
  const from = target.lines.length;
  const summary = await hey(target, Number(args.seconds), true);
  const answered = /Requests\/sec:\s+([\d.]+)/.exec(summary)?.[1];
  const p99 = /99%+ in ([\d.]+) secs/.exec(summary)?.[1];
  console.log(
    JSON.stringify({
      target: args.target,
      rate,
      seconds: Number(args.seconds),
      answeredPerSecond: answered === undefined ? undefined : Number(answered),
      heyP99Ms: p99 === undefined ? undefined : Number(p99) * 1000,
      scavenges: scavenges(target.lines.slice(from)),
    }),
  );
} finally {
  await target.running.stop();
  await backend.running.stop();
}
