/**
 * The load generators: `wrk` for throughput (closed loop, as fast as the target answers) and,
 * for latency, bench/open-loop.ts at a fixed rate, each request timed from when it was due
 * (issue 18: hey's `-q` paced each worker after its previous answer, so a stall delayed the
 * requests behind it instead of being measured by them — coordinated omission). `runHey` is
 * kept for comparison. All run pinned to the load core.
 */
import { spawn } from 'node:child_process';

export interface WrkResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Non-2xx/3xx answers plus socket errors (connect, read, write, timeout). */
  errors: number;
  /** wrk's own latency percentiles under saturation, ms. */
  p50Ms: number;
  p99Ms: number;
}

export interface HeyResult {
  requests: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** Answers that were not 2xx. (hey's CSV output leaves transport errors out; see `shortfall`.) */
  errors: number;
  /**
   * Requests the pacing called for (workers × rate × seconds) minus answers recorded: transport
   * errors, or a target that could not keep up with the rate.
   */
  shortfall: number;
}

function run(argv: string[], timeoutMs: number, env?: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`${argv.join(' ')} failed (${code}): ${err}`));
    });
  });
}

function pinned(cpus: string | undefined, argv: string[]): string[] {
  return cpus === undefined ? argv : ['taskset', '-c', cpus, ...argv];
}

function headerArgs(flag: string, headers: Record<string, string>): string[] {
  return Object.entries(headers).flatMap(([name, value]) => [flag, `${name}: ${value}`]);
}

/** wrk's duration text (`1.23ms`, `450.00us`, `1.02s`) in ms. */
function wrkDurationMs(text: string): number {
  const match = /([\d.]+)(us|ms|s|m)/.exec(text);
  if (!match) return NaN;
  const value = Number(match[1]);
  return match[2] === 'us'
    ? value / 1000
    : match[2] === 'ms'
      ? value
      : match[2] === 's'
        ? value * 1000
        : value * 60_000;
}

/** One wrk run. */
export async function runWrk(options: {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  cpus?: string;
}): Promise<WrkResult> {
  const argv = pinned(options.cpus, [
    'wrk',
    '-t1',
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--latency',
    ...headerArgs('-H', options.headers),
    options.url,
  ]);
  const text = await run(argv, (options.seconds + 30) * 1000);
  const requests = /(\d+) requests in ([\d.]+)(\w+)/.exec(text);
  if (!requests) throw new Error(`unexpected wrk output:\n${text}`);
  const seconds = wrkDurationMs(`${requests[2]}${requests[3]}`) / 1000;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) + Number(socket[4]) : 0;
  const percentile = (p: string) => wrkDurationMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(text)?.[1] ?? '');
  return {
    requests: Number(requests[1]),
    seconds,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? Number(requests[1]) / seconds),
    errors: non2xx + socketErrors,
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
  };
}

/** The value below which `p` of the sorted values lie (nearest rank). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** One hey run at a fixed rate: `workers` × `perWorkerRate` requests a second for `seconds`. */
export async function runHey(options: {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  workers: number;
  perWorkerRate: number;
  cpus?: string;
}): Promise<HeyResult> {
  const argv = pinned(options.cpus, [
    'hey',
    '-z',
    `${options.seconds}s`,
    '-c',
    String(options.workers),
    '-q',
    String(options.perWorkerRate),
    '-o',
    'csv',
    ...headerArgs('-H', options.headers),
    options.url,
  ]);
  const text = await run(argv, (options.seconds + 60) * 1000);
  const latencies: number[] = [];
  let errors = 0;
  // Columns: response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset
  for (const line of text.split('\n').slice(1)) {
    if (line === '') continue;
    const fields = line.split(',');
    latencies.push(Number(fields[0]) * 1000);
    const status = Number(fields[6]);
    if (!(status >= 200 && status < 300)) errors++;
  }
  latencies.sort((a, b) => a - b);
  const expected = options.workers * options.perWorkerRate * options.seconds;
  return {
    requests: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    p999Ms: percentile(latencies, 99.9),
    errors,
    shortfall: Math.max(0, expected - latencies.length),
  };
}

export interface OpenLoopResult {
  requests: number;
  /** Non-2xx answers, transport errors and requests still unanswered 30 s after the last was due. */
  errors: number;
  /** Connections that failed or closed with a request outstanding (counted in `errors`). */
  transportErrors?: number;
  unanswered: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** How late the generator itself got to a request after it was due (p99 and max, ms): its own stalls. */
  sendLagP99Ms: number;
  sendLagMaxMs: number;
  sendLagP50Ms?: number;
  /** From the write to the answer, ms (what the target and loopback took, without the generator's lag). */
  serviceP50Ms?: number;
  serviceP99Ms?: number;
  serviceP999Ms?: number;
  serviceMaxMs?: number;
  /** Answers that did not frame as HTTP/1.1 (the connection was closed), counted in `errors`. */
  malformed?: number;
  /** Connections open / most busy at once; requests that waited for a free one, and the longest wait (ms). */
  connections?: number;
  connectionsBusyMax?: number;
  waitedForConnection?: number;
  connectionWaitMaxMs?: number;
  chunkedResponses?: number;
  /** GC pauses in the generator's own process during the run. */
  generatorGc?: { count: number; totalMs: number; maxMs: number };
  /** `worker` (default) or `timer` (BENCH_OL_TICK), and the generator's CPU time during the run, ms. */
  generatorClock?: string;
  generatorCpuMs?: number;
}

/**
 * One run of bench/open-loop.ts (`script`: the node arguments that run it as built): `rate`
 * requests a second for `seconds`, each timed from when it was due (no coordinated omission).
 */
export async function runOpenLoop(options: {
  script: string[];
  url: string;
  headers: Record<string, string>;
  seconds: number;
  rate: number;
  /** Keep-alive connections (default 64). */
  connections?: number;
  cpus?: string;
}): Promise<OpenLoopResult> {
  const env = {
    BENCH_OL_URL: options.url,
    BENCH_OL_RATE: String(options.rate),
    BENCH_OL_SECONDS: String(options.seconds),
    BENCH_OL_HEADERS: JSON.stringify(options.headers),
    ...(options.connections === undefined ? {} : { BENCH_OL_CONNECTIONS: String(options.connections) }),
    // The generator is not sampled (lib/loop-stats.ts would add a 1 ms timer to it).
    BENCH_LOOP_STATS: '',
  };
  const argv = pinned(options.cpus, [process.execPath, ...options.script]);
  const text = await run(argv, (options.seconds + 60) * 1000, env);
  return JSON.parse(text.trim().split('\n').pop()!) as OpenLoopResult;
}
