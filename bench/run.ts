/**
 * `npm run bench` — the same load through the backend alone, nginx, three Node.js proxies and
 * Portico, in one run, on loopback (DESIGN §7). See bench/README.md for the method.
 *
 * node --import tsx bench/run.ts [--profile default|quick|check|scale|reload|workers|all] [--only a,b] [--cpu-prof | --heap-prof] [--source]
 * node --import tsx bench/run.ts --paired a,b [--rounds 5] [--seconds 4]   (two targets at once: their CPU ratio)
 *
 * `--only` keeps the profile's targets named (plus `direct`, the reference); `--cpu-prof`
 * writes a CPU profile of each Portico target's load to bench/results/profiles/. Node targets
 * run compiled (bench/lib/build.ts); `--source` runs them from TypeScript through tsx.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayNodeFlags } from '../src/gateway/heap-tuning.ts';
import { runOpenLoop, runWrk } from './lib/load.ts';
import { cpuTicks, freePort, processTree, rssMb, startProcess } from './lib/processes.ts';
import type { Running } from './lib/processes.ts';
import { printReport, targetChecks } from './lib/report.ts';
import type { TargetResult } from './lib/report.ts';
import { ensureTools, nginxPath } from './lib/tools.ts';
import { benchScript, compileForBench, porticoCommand } from './lib/build.ts';
import type { BuildKind } from './lib/build.ts';
import type { SetupResult } from './portico-setup.ts';

interface Profile {
  name: string;
  targets: string[];
  warmSeconds: number;
  runs: number;
  runSeconds: number;
  heySeconds: number;
}

const baseTargets = [
  'direct',
  'direct-core1',
  'nginx',
  'http-proxy',
  'fast-gateway',
  'fastify-http-proxy',
  'portico-pass',
  'portico-full',
  'portico-jwt',
  'portico-introspect',
  'portico-oauth',
  'portico-logistics-shipping',
  'portico-logistics-stores',
  'portico-financing',
  'portico-full-redis',
];

const profiles: Record<string, Profile> = {
  default: { name: 'default', targets: baseTargets, warmSeconds: 3, runs: 3, runSeconds: 5, heySeconds: 15 },
  /** A quicker A/B of Portico alone, for optimisation work. */
  check: {
    name: 'check',
    targets: ['direct', 'portico-pass', 'portico-full'],
    warmSeconds: 2,
    runs: 3,
    runSeconds: 4,
    heySeconds: 10,
  },
  quick: {
    name: 'quick',
    targets: ['direct', 'nginx', 'http-proxy', 'portico-pass', 'portico-full'],
    warmSeconds: 1,
    runs: 1,
    runSeconds: 3,
    heySeconds: 5,
  },
  /** Issue 18's rows: the controls' tails, pass, full and the GatewayScript flow (~2.5 min). */
  tail: {
    name: 'tail',
    targets: [
      'direct',
      'direct-core1',
      'node-floor',
      'portico-pass',
      'portico-full',
      'portico-logistics-stores',
      'portico-logistics-stores-inline',
    ],
    warmSeconds: 2,
    runs: 3,
    runSeconds: 4,
    heySeconds: 15,
  },
  /** What a JWT check and a cached introspection add to portico-full (issue 13). */
  identity: {
    name: 'identity',
    targets: ['direct', 'portico-full', 'portico-jwt', 'portico-introspect', 'portico-oauth'],
    warmSeconds: 2,
    runs: 3,
    runSeconds: 4,
    heySeconds: 5,
  },
  /** A token the gateway issued itself (native OAuth provider, ES256) against portico-full (issue 14). */
  oauth: {
    name: 'oauth',
    targets: ['direct', 'portico-full', 'portico-oauth'],
    warmSeconds: 1,
    runs: 1,
    runSeconds: 3,
    heySeconds: 5,
  },
  scale: {
    name: 'scale',
    targets: ['direct', 'portico-full', 'portico-full-scale', 'portico-full-scale-reload'],
    warmSeconds: 3,
    runs: 3,
    runSeconds: 5,
    heySeconds: 15,
  },
  reload: {
    name: 'reload',
    targets: ['direct', 'portico-full', 'portico-full-reload'],
    warmSeconds: 3,
    runs: 3,
    runSeconds: 6,
    heySeconds: 15,
  },
  /** `portico serve --role gateway --workers N`, N = 1 and 2 (the scale-out issue): the scaling from 1 to N workers. */
  workers: {
    name: 'workers',
    targets: ['direct', 'portico-full', 'portico-full-workers-1', 'portico-full-workers-2'],
    warmSeconds: 3,
    runs: 3,
    runSeconds: 5,
    heySeconds: 15,
  },
};
profiles.all = {
  ...profiles.default,
  name: 'all',
  targets: [...baseTargets, 'portico-full-scale', 'portico-full-reload', 'portico-full-scale-reload'],
};

/** wrk connections, and the latency run's fixed rate (bench/open-loop.ts), req/s. */
const load = { connections: 32, rate: 2000 };
const scale = { apis: 1000, subscriptions: 100_000 };
const clockTicksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const benchDir = fileURLToPath(new URL('.', import.meta.url));
const node = process.execPath;

/** Load generator and backends on core 0, the target alone on core 1 (tooling.md). */
const cores = cpus().length >= 2 ? { load: '0', target: '1' } : { load: undefined, target: undefined };
/**
 * A worker cluster's primary and workers may use every core (0-1 on this 2-core machine, the
 * same as not pinning them): the load generator and the backend stay on core 0, so with two
 * workers one of them shares core 0 with the load.
 */
const clusterCores = cpus().length >= 2 ? `0-${cpus().length - 1}` : undefined;

interface Started {
  process: Running | undefined;
  url: string;
  headers: Record<string, string>;
  /** Why this target cannot be measured (checked before any load), if it cannot. */
  check?: (body: string, status: number) => string | undefined;
  /** A further check before any load (e.g. shared rate-limit counting); a reason to refuse, if any. */
  verify?: () => Promise<string | undefined>;
  /** Facts of the start-up, recorded with the result. */
  facts?: Record<string, unknown>;
  /** Not a Node process (nginx): no event-loop/GC sampling; SIGUSR2 means something else to it. */
  native?: boolean;
}

interface Shared {
  backendPort: number;
  samplePorts?: Record<string, number>;
  samples?: Running;
  scratch: string;
}

const profileDir = join(benchDir, 'results', 'profiles');
let cpuProfiles = false;
let heapProfiles = false;
let build: BuildKind = 'compiled';
/** How long a profiled target may take to write its profile when stopped (portico-target.ts waits as long). */
const profileGraceMs = 60_000;

function nodeTarget(
  name: string,
  file: string,
  env: Record<string, string | undefined>,
  timeoutMs = 60_000,
): Promise<Running> {
  if (cpuProfiles && file === 'portico-target.ts') {
    mkdirSync(profileDir, { recursive: true });
    env = {
      ...env,
      BENCH_CPU_PROFILE: join(profileDir, `${name}.cpuprofile`),
      BENCH_PROFILE_GRACE_MS: `${profileGraceMs}`,
    };
  } else if (heapProfiles && file === 'portico-target.ts') {
    mkdirSync(profileDir, { recursive: true });
    env = {
      ...env,
      BENCH_HEAP_PROFILE: join(profileDir, `${name}.heapprofile`),
      BENCH_PROFILE_GRACE_MS: `${profileGraceMs}`,
    };
  }
  // BENCH_PORTICO_NODE_FLAGS: V8/Node flags for the Portico targets only (GC experiments). The
  // targets also get the flags a `portico serve --workers N` worker starts with (heap-tuning.ts).
  const own = (process.env.BENCH_PORTICO_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const flags = file === 'portico-target.ts' ? [...gatewayNodeFlags(own), ...own] : [];
  return startProcess({
    name,
    cpus: cores.target,
    command: node,
    args: [...flags, ...benchScript(build, file)],
    env,
    ready: { kind: 'announce' },
    timeoutMs,
    // A sampling heap profile of a whole run (millions of samples) takes seconds to assemble.
    stopGraceMs: env.BENCH_PROFILE_GRACE_MS === undefined ? undefined : profileGraceMs + 3000,
  });
}

function porticoUrl(running: Running, key: string): { url: string; headers: Record<string, string> } {
  const facts = running.announcement.facts as { paths: Record<string, string> };
  return {
    url: `http://127.0.0.1:${running.port}${facts.paths[key]}`,
    headers: running.announcement.headers ?? {},
  };
}

async function startNginx(shared: Shared): Promise<Running> {
  const port = await freePort();
  const dir = mkdtempSync(join(shared.scratch, 'nginx-'));
  // As tooling.md gives it: one worker, keep-alive upstream connections, no access log.
  const conf = `worker_processes 1;
daemon off;
user root;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  upstream up { server 127.0.0.1:${shared.backendPort}; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  return startProcess({
    name: 'nginx',
    cpus: cores.target,
    command: nginxPath(),
    args: ['-p', dir, '-c', join(dir, 'nginx.conf')],
    ready: { kind: 'port', port },
  });
}

async function samplePorts(shared: Shared): Promise<Record<string, number>> {
  if (shared.samplePorts) return shared.samplePorts;
  shared.samples = await startProcess({
    name: 'samples',
    cpus: cores.load,
    command: node,
    args: benchScript(build, 'samples-target.ts'),
    ready: { kind: 'announce' },
  });
  shared.samplePorts = (shared.samples.announcement.facts as { ports: Record<string, number> }).ports;
  return shared.samplePorts;
}

function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(6379, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

const financingExpected = 299.71;

/**
 * `portico serve --role gateway --workers N` on the portico-full catalog: portico-setup.ts writes
 * the catalog into a data dir in its own process first, then the CLI serves it (the primary
 * holds the rate-limit counters when there is no Redis). With N = 1 the CLI runs the gateway in
 * its one process, without a cluster.
 */
async function startWorkers(name: string, workers: number, shared: Shared): Promise<Started> {
  const dataDir = mkdtempSync(join(shared.scratch, `workers-${workers}-`));
  const setupStarted = Date.now();
  const setup = spawnSync(node, benchScript(build, 'portico-setup.ts'), {
    env: {
      ...process.env,
      BENCH_DATA_DIR: dataDir,
      BENCH_MODE: 'full',
      BENCH_UPSTREAM_PORT: String(shared.backendPort),
    },
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (setup.status !== 0)
    throw new Error(`bench setup failed (${setup.status ?? setup.signal}): ${setup.stderr.slice(-2000)}`);
  const result = JSON.parse(setup.stdout.trim().split('\n').pop()!) as SetupResult;
  const env = {
    PORTICO_GATEWAY_PORT: '0',
    PORTICO_LOG_LEVEL: 'warn',
    PORTICO_REDIS_URL: undefined,
    PORTICO_WORKERS: undefined,
    PORTICO_DATABASE_URL: undefined,
  };
  const running = await startProcess({
    name,
    cpus: clusterCores,
    command: node,
    args: [...porticoCommand(build), 'serve', '--role', 'gateway', '--workers', String(workers), '--data-dir', dataDir],
    env,
    // `gateway    http://127.0.0.1:PORT (N workers)`; without the suffix when N = 1.
    ready: { kind: 'line', pattern: /^gateway\s+http:\/\/[^:/\s]+:(?<port>\d+)/ },
    timeoutMs: 120_000,
  });
  const workerPids = processTree(running.pid).slice(1);
  const url = `http://127.0.0.1:${running.port}${result.paths.item}`;
  const headers = { 'X-IBM-Client-Id': result.clientId! };
  const started: Started = {
    process: running,
    url,
    headers,
    facts: {
      workers,
      processes: 1 + workerPids.length,
      line: running.announcement.facts?.line,
      setupMs: Date.now() - setupStarted,
      pinning: clusterCores ?? 'none',
    },
  };
  if (workers > 1 && workerPids.length < workers) {
    await running.stop();
    throw new Error(`expected ${workers} worker processes under ${running.pid}, found ${workerPids.length}`);
  }
  started.verify = () => sharedCounting(url, headers, workers);
  return started;
}

/**
 * The plan limit is counted once across workers: X-RateLimit-Remaining must fall by exactly one
 * per request over requests on new connections, which the cluster's round-robin scheduling
 * hands to the workers in turn (counting per worker would repeat values).
 */
async function sharedCounting(
  url: string,
  headers: Record<string, string>,
  workers: number,
): Promise<string | undefined> {
  const remaining: number[] = [];
  for (let i = 0; i < Math.max(6, 3 * workers); i++) {
    const response = await fetch(url, {
      headers: { ...headers, connection: 'close' },
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    const value = /,(\d+);/.exec(response.headers.get('x-ratelimit-remaining') ?? '')?.[1];
    if (response.status !== 200 || value === undefined)
      return `answers ${response.status} with X-RateLimit-Remaining ${response.headers.get('x-ratelimit-remaining')}`;
    remaining.push(Number(value));
  }
  const steps = remaining.slice(1).map((value, i) => remaining[i] - value);
  return steps.every((step) => step === 1)
    ? undefined
    : `the plan limit is not counted once across workers: X-RateLimit-Remaining ${remaining.join(', ')}`;
}

/** Starts a target by name. */
async function startTarget(name: string, shared: Shared): Promise<Started> {
  const upstream = { BENCH_UPSTREAM_PORT: String(shared.backendPort) };
  const item = '/item';
  switch (name) {
    case 'direct':
      return { process: undefined, url: `http://127.0.0.1:${shared.backendPort}${item}`, headers: {} };
    case 'direct-core1': {
      // Control: a second backend alone on the target core, to show what the placement itself adds to latency.
      const running = await startProcess({
        name,
        cpus: cores.target,
        command: node,
        args: benchScript(build, 'backend.ts'),
        ready: { kind: 'announce' },
      });
      return { process: running, url: `http://127.0.0.1:${running.port}${item}`, headers: {} };
    }
    case 'nginx': {
      const running = await startNginx(shared);
      return { process: running, url: `http://127.0.0.1:${running.port}${item}`, headers: {}, native: true };
    }
    case 'http-proxy':
    case 'fast-gateway':
    case 'fastify-http-proxy':
    case 'node-floor': {
      const running = await nodeTarget(name, `peers/${name}.ts`, upstream);
      return { process: running, url: `http://127.0.0.1:${running.port}${item}`, headers: {} };
    }
    case 'portico-pass':
    case 'portico-full':
    case 'portico-full-redis':
    case 'portico-full-scale':
    case 'portico-full-reload':
    case 'portico-full-scale-reload':
    case 'portico-jwt':
    case 'portico-introspect':
    case 'portico-oauth': {
      const modes: Record<string, string> = {
        'portico-pass': 'pass',
        'portico-jwt': 'jwt',
        'portico-introspect': 'introspect',
        'portico-oauth': 'oauth',
      };
      const mode = modes[name] ?? 'full';
      const env: Record<string, string | undefined> = {
        ...upstream,
        BENCH_MODE: mode,
        PORTICO_REDIS_URL: undefined,
      };
      if (name === 'portico-full-redis') env.PORTICO_REDIS_URL = 'redis://127.0.0.1:6379';
      if (name === 'portico-full-scale' || name === 'portico-full-scale-reload')
        Object.assign(env, {
          BENCH_SCALE_APIS: String(scale.apis),
          BENCH_SCALE_SUBSCRIPTIONS: String(scale.subscriptions),
        });
      if (name === 'portico-full-reload' || name === 'portico-full-scale-reload') env.BENCH_PUBLISH_EVERY_MS = '1000';
      const running = await nodeTarget(name, 'portico-target.ts', env, 300_000);
      return { process: running, ...porticoUrl(running, 'item') };
    }
    case 'portico-full-workers-1':
    case 'portico-full-workers-2':
      return startWorkers(name, Number(name.slice('portico-full-workers-'.length)), shared);
    case 'portico-logistics-shipping':
    case 'portico-logistics-stores':
    case 'portico-logistics-stores-inline':
    case 'portico-financing': {
      const ports = await samplePorts(shared);
      const running = await nodeTarget(name, 'portico-target.ts', {
        BENCH_MODE: 'accessories',
        BENCH_SAMPLE_PORTS: JSON.stringify(ports),
        PORTICO_REDIS_URL: undefined,
        // The opt-in GatewayScript inline tier (docs/policies.md, "Inline tier"), 1 ms slice.
        PORTICO_SCRIPT_INLINE_US: name === 'portico-logistics-stores-inline' ? '1000' : undefined,
      });
      const key =
        name === 'portico-financing' ? 'financing' : name === 'portico-logistics-shipping' ? 'shipping' : 'stores';
      const started: Started = { process: running, ...porticoUrl(running, key) };
      if (name === 'portico-financing') {
        started.check = (body, status) => {
          let amount: unknown;
          try {
            amount = (JSON.parse(body) as { paymentAmount?: unknown }).paymentAmount;
          } catch {
            amount = undefined;
          }
          return status === 200 && amount === financingExpected
            ? undefined
            : `the financing flow does not answer 200 {"paymentAmount":${financingExpected}} yet (got ${status} ${body.slice(0, 160)})`;
        };
      }
      return started;
    }
    default:
      throw new Error(`unknown target ${name}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function preflight(started: Started): Promise<string | undefined> {
  let response: Response;
  try {
    response = await fetch(started.url, { headers: started.headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    return `no answer: ${(error as Error).message}`;
  }
  const body = await response.text();
  if (started.check) return started.check(body, response.status);
  if (response.status !== 200) return `answers ${response.status}: ${body.slice(0, 200)}`;
  return started.verify?.();
}

async function measure(name: string, profile: Profile, shared: Shared & { backendPid: number }): Promise<TargetResult> {
  if (name === 'portico-full-redis' && !(await redisAnswers()))
    return { name, measured: false, reason: 'no Redis answers at 127.0.0.1:6379' };
  let started: Started;
  try {
    started = await startTarget(name, shared);
  } catch (error) {
    return { name, measured: false, reason: `did not start: ${(error as Error).message.slice(0, 400)}` };
  }
  const pid = started.process?.pid ?? shared.backendPid;
  // The machine may be shared: the 1-minute load average before the load says how quiet it was.
  const loadBefore = loadavg()[0];
  try {
    const refusal = await preflight(started);
    if (refusal) return { name, measured: false, reason: refusal };
    const wrkOptions = {
      url: started.url,
      headers: started.headers,
      connections: load.connections,
      cpus: cores.load,
    };
    await runWrk({ ...wrkOptions, seconds: profile.warmSeconds });
    const runs = [];
    for (let i = 0; i < profile.runs; i++) {
      const before = cpuTicks(pid);
      const result = await runWrk({ ...wrkOptions, seconds: profile.runSeconds });
      const ticks = cpuTicks(pid) - before;
      runs.push({ ...result, cpuUsPerRequest: (ticks * 1e6) / clockTicksPerSecond / result.requests });
    }
    const rss = rssMb(pid);
    const sampled = started.native ? [] : processTree(pid);
    const latency = await sampledWhile(sampled, () =>
      runOpenLoop({
        script: benchScript(build, 'open-loop.ts'),
        url: started.url,
        headers: started.headers,
        seconds: profile.heySeconds,
        rate: load.rate,
        cpus: cores.load,
      }),
    );
    const facts = started.facts ?? started.process?.announcement.facts;
    const final = await started.process?.stop();
    started.process = undefined;
    const rps = median(runs.map((r) => r.rps));
    return {
      name,
      measured: true,
      rps,
      rps_runs: runs.map((r) => Math.round(r.rps)),
      p50_ms: latency.p50Ms,
      p99_ms: latency.p99Ms,
      p999_ms: latency.p999Ms,
      max_ms: latency.maxMs,
      latency_requests: latency.requests,
      latency_unanswered: latency.unanswered,
      generator_send_lag_ms: { p99: latency.sendLagP99Ms, max: latency.sendLagMaxMs },
      generator: {
        send_lag_p50_ms: latency.sendLagP50Ms,
        service_ms: {
          p50: latency.serviceP50Ms,
          p99: latency.serviceP99Ms,
          p999: latency.serviceP999Ms,
          max: latency.serviceMaxMs,
        },
        malformed: latency.malformed,
        connections: latency.connections,
        connections_busy_max: latency.connectionsBusyMax,
        waited_for_connection: latency.waitedForConnection,
        connection_wait_max_ms: latency.connectionWaitMaxMs,
        chunked_responses: latency.chunkedResponses,
        gc: latency.generatorGc,
        clock: latency.generatorClock,
        cpu_ms: latency.generatorCpuMs,
      },
      loop_stats: latency.loopStats,
      saturated_at_fixed_rate: rps < load.rate * 1.25,
      errors: runs.reduce((sum, r) => sum + r.errors, 0) + latency.errors,
      cpu_us_per_req: median(runs.map((r) => r.cpuUsPerRequest)),
      rss_mb: rss,
      load_average_before: Math.round(loadBefore * 100) / 100,
      facts: { ...(facts ?? {}), ...(final ? { final } : {}) },
    };
  } catch (error) {
    return {
      name,
      measured: false,
      reason: `the measurement failed: ${(error as Error).message.slice(0, 400)}`,
    };
  } finally {
    await started.process?.stop();
  }
}

interface PairedRound {
  cpu_us_per_req: [number, number];
  rps: [number, number];
  /** Second target's CPU µs/req ÷ the first's. */
  ratio: number;
}

/**
 * `--paired a,b`: both targets up at once, both on the target core, loaded together by one wrk
 * each on the load core, round after round; each round gives the CPU µs/req of both over the same
 * seconds, and b ÷ a. On a shared machine whose speed moves by the second (sessions 9–11: the same
 * code 145–183 µs/req in two runs), sequential runs of a and b measure two different machines; a
 * paired round measures both on the same one, so their ratio holds where the absolute figures do
 * not. Throughput is not compared: the two share the core, so each one's req/s is its share of it.
 */
async function measurePaired(
  names: [string, string],
  rounds: number,
  seconds: number,
  shared: Shared,
): Promise<{ rounds: PairedRound[]; ratio_median: number; ratio_min: number; ratio_max: number }> {
  const started: Started[] = [];
  try {
    for (const name of names) started.push(await startTarget(name, shared));
    for (const [i, target] of started.entries()) {
      const refusal = await preflight(target);
      if (refusal) throw new Error(`${names[i]}: ${refusal}`);
    }
    const pids = started.map((target) => target.process?.pid ?? 0);
    if (pids.includes(0)) throw new Error('--paired compares two processes of their own (not direct)');
    const both = (runSeconds: number) =>
      Promise.all(
        started.map((target) =>
          runWrk({
            url: target.url,
            headers: target.headers,
            connections: load.connections,
            cpus: cores.load,
            seconds: runSeconds,
          }),
        ),
      );
    // Long enough for both to be warm: after 3 s, the first round of a GatewayScript target still
    // cost ~1.7× the rounds after it.
    await both(6);
    const out: PairedRound[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = pids.map(cpuTicks);
      const results = await both(seconds);
      const cpu = pids.map((pid, i) => ((cpuTicks(pid) - before[i]) * 1e6) / clockTicksPerSecond / results[i].requests);
      const errors = results.reduce((sum, r) => sum + r.errors, 0);
      if (errors > 0) throw new Error(`round ${round + 1}: ${errors} errors`);
      out.push({
        cpu_us_per_req: [round1(cpu[0]), round1(cpu[1])],
        rps: [Math.round(results[0].rps), Math.round(results[1].rps)],
        ratio: Math.round((cpu[1] / cpu[0]) * 1000) / 1000,
      });
      process.stderr.write(
        `bench: round ${round + 1}: ${names[0]} ${cpu[0].toFixed(1)} µs/req, ${names[1]} ${cpu[1].toFixed(1)} µs/req, ratio ${(cpu[1] / cpu[0]).toFixed(3)}\n`,
      );
    }
    const ratios = out.map((r) => r.ratio);
    return {
      rounds: out,
      ratio_median: median(ratios),
      ratio_min: Math.min(...ratios),
      ratio_max: Math.max(...ratios),
    };
  } finally {
    for (const target of started) await target.process?.stop();
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/**
 * Runs `work` inside a sampling window of lib/loop-stats.ts in each of `pids` (SIGUSR2 opens and
 * closes it); adds what each process recorded (event-loop delay, GC pauses) as `loopStats`.
 */
async function sampledWhile<T extends object>(
  pids: number[],
  work: () => Promise<T>,
): Promise<T & { loopStats?: unknown[] }> {
  const dir = process.env.BENCH_LOOP_STATS!;
  const signal = () => pids.forEach((pid) => process.kill(pid, 'SIGUSR2'));
  signal();
  let result: T;
  try {
    result = await work();
  } finally {
    signal();
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const files = pids.map((pid) => join(dir, `${pid}.json`)).filter((file) => existsSync(file));
  const loopStats = files.map((file) => ({
    pid: Number(/(\d+)\.json$/.exec(file)![1]),
    ...JSON.parse(readFileSync(file, 'utf8')),
  }));
  files.forEach((file) => rmSync(file));
  return { ...result, loopStats: loopStats.length > 0 ? loopStats : undefined };
}

function machine(): Record<string, unknown> {
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memory_gb: Math.round(totalmem() / 1e9),
    kernel: release(),
    node: process.version,
    pinning:
      cores.target === undefined
        ? 'none (one core)'
        : `load generator + backends on core 0, target on core 1; portico-full-workers-N (primary + workers) on cores ${clusterCores}`,
  };
}

function commit(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const dirty = spawnSync(
    'git',
    ['status', '--porcelain', '--', 'src/gateway', 'src/policies', 'src/analytics', 'src/ratelimit', 'bench'],
    { encoding: 'utf8' },
  ).stdout.trim();
  return dirty ? `${head}+local-changes` : head;
}

function parseProfile(argv: string[]): Profile {
  const index = argv.indexOf('--profile');
  const name = index >= 0 ? argv[index + 1] : 'default';
  const profile = profiles[name ?? ''];
  if (!profile) throw new Error(`--profile must be one of ${Object.keys(profiles).join(', ')}`);
  const only = argv.indexOf('--only');
  if (only < 0) return profile;
  const wanted = new Set(['direct', ...(argv[only + 1] ?? '').split(',')]);
  return { ...profile, name: `${profile.name}-only`, targets: profile.targets.filter((t) => wanted.has(t)) };
}

async function main(): Promise<void> {
  const profile = parseProfile(process.argv.slice(2));
  cpuProfiles = process.argv.includes('--cpu-prof');
  heapProfiles = process.argv.includes('--heap-prof');
  build = process.argv.includes('--source') ? 'source' : 'compiled';
  ensureTools();
  if (build === 'compiled') {
    process.stderr.write('bench: compiling to dist/ (tsconfig.bench.json)…\n');
    compileForBench();
  }
  const scratch = mkdtempSync(join(tmpdir(), 'portico-bench-run-'));
  // Every Node process started from here preloads lib/loop-stats.ts, which writes here.
  process.env.BENCH_LOOP_STATS = join(scratch, 'loop-stats');
  mkdirSync(process.env.BENCH_LOOP_STATS);
  const started = Date.now();
  const backend = await startProcess({
    name: 'backend',
    cpus: cores.load,
    command: node,
    args: benchScript(build, 'backend.ts'),
    ready: { kind: 'announce' },
  });
  const shared: Shared & { backendPid: number } = {
    backendPort: backend.port,
    backendPid: backend.pid,
    scratch,
  };
  const pairedAt = process.argv.indexOf('--paired');
  const results: TargetResult[] = [];
  try {
    if (pairedAt >= 0) {
      await pairedRun(process.argv, pairedAt, shared, started);
      return;
    }
    for (const name of profile.targets) {
      process.stderr.write(`bench: ${name}…\n`);
      const result = await measure(name, profile, shared);
      if (!result.measured) process.stderr.write(`bench: ${name} not measured: ${result.reason}\n`);
      results.push(result);
    }
  } finally {
    await shared.samples?.stop();
    await backend.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  const report = {
    machine: machine(),
    date: new Date().toISOString(),
    commit: commit(),
    profile: profile.name,
    build,
    method: {
      wrk: `wrk -t1 -c${load.connections}, ${profile.warmSeconds}s warm-up, then ${profile.runs} × ${profile.runSeconds}s; median requests/s`,
      latency: `bench/open-loop.ts: ${load.rate} req/s for ${profile.heySeconds}s, open loop (sent when due on 64 raw node:net keep-alive connections, one request outstanding each; a request due while all are busy waits for one), each latency from its due time; p50/p99/p99.9/max of every answer`,
      loop_stats:
        'in each Node target process during the latency run: monitorEventLoopDelay (1 ms resolution) and every gc PerformanceObserver entry',
      cpu: 'utime+stime of the target process tree over the wrk runs ÷ requests (median of runs)',
      rss: 'VmRSS of the target process tree after the wrk runs',
    },
    duration_s: Math.round((Date.now() - started) / 1000),
    targets: withNodePeer(results),
  };
  const checks = targetChecks(report.targets);
  printReport(report.targets, checks);
  const dir = join(benchDir, 'results');
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify({ ...report, checks }, null, 2)}\n`;
  writeFileSync(join(dir, `${profile.name}.json`), text);
  if (profile.name === 'default' || profile.name === 'all') writeFileSync(join(dir, 'latest.json'), text);
  process.stderr.write(
    `bench: ${profile.name} profile done in ${report.duration_s}s; results in bench/results/${profile.name}.json\n`,
  );
}

/** `--paired a,b [--rounds N] [--seconds S]`: prints each round and the ratio, and writes bench/results/paired.json. */
async function pairedRun(argv: string[], at: number, shared: Shared, startedAt: number): Promise<void> {
  const names = (argv[at + 1] ?? '').split(',');
  if (names.length !== 2 || names.includes(''))
    throw new Error('--paired takes two Portico or peer targets, e.g. --paired portico-pass,portico-full');
  const option = (flag: string, fallback: number) => {
    const i = argv.indexOf(flag);
    const value = i >= 0 ? Number(argv[i + 1]) : fallback;
    if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} must be a whole number ≥ 1`);
    return value;
  };
  const rounds = option('--rounds', 5);
  const seconds = option('--seconds', 4);
  process.stderr.write(`bench: paired ${names[0]} and ${names[1]}, ${rounds} rounds of ${seconds}s…\n`);
  const loadBefore = loadavg()[0];
  const result = await measurePaired([names[0], names[1]], rounds, seconds, shared);
  const report = {
    machine: machine(),
    date: new Date().toISOString(),
    commit: commit(),
    build,
    paired: names,
    method: `both targets on core ${cores.target ?? '(any)'} at once, one wrk -t1 -c${load.connections} each on core ${cores.load ?? '(any)'}, 6s warm-up, then ${rounds} rounds of ${seconds}s; per round utime+stime of each process tree ÷ its requests, and ${names[1]} ÷ ${names[0]}`,
    load_average_before: Math.round(loadBefore * 100) / 100,
    duration_s: Math.round((Date.now() - startedAt) / 1000),
    ...result,
  };
  process.stdout.write(
    `${names[1]} ÷ ${names[0]}, CPU µs/req in the same seconds: median ${result.ratio_median.toFixed(3)} (${result.ratio_min.toFixed(3)}–${result.ratio_max.toFixed(3)} over ${rounds} rounds)\n`,
  );
  const dir = join(benchDir, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'paired.json'), `${JSON.stringify(report, null, 2)}\n`);
}

/** Adds `node-peer`: the best measured of the three Node.js proxies, named. */
function withNodePeer(results: TargetResult[]): TargetResult[] {
  const peers = results.filter(
    (r) => r.measured && ['http-proxy', 'fast-gateway', 'fastify-http-proxy'].includes(r.name),
  );
  if (peers.length === 0) return results;
  const best = peers.reduce((a, b) => ((b.rps ?? 0) > (a.rps ?? 0) ? b : a));
  const index = results.findIndex((r) => r.name === 'portico-pass');
  const entry: TargetResult = { ...best, name: 'node-peer', peer: best.name };
  const out = [...results];
  out.splice(index < 0 ? out.length : index, 0, entry);
  return out;
}

await main();
