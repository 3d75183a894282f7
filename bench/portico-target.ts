/**
 * Portico as a bench target: the gateway alone, as `portico serve --role gateway` runs it.
 *
 * The catalog is first written into a temporary SQLite store by bench/portico-setup.ts in a
 * separate process (its memory is not the gateway's); then this process runs
 * `startPlatform(settings, logger, 'gateway')`, which compiles the snapshot from the store.
 * The gateway reads the store only at start and on a change (DESIGN §1): the per-request
 * path sees no database.
 *
 * `BENCH_MODE` and the scale variables: see portico-setup.ts. `BENCH_PUBLISH_EVERY_MS`
 * republishes the bench product, changed, at that interval during the run (the reload
 * profile), through the platform's own services, so each publish swaps the snapshot at once.
 * `PORTICO_REDIS_URL` is passed through. `BENCH_CPU_PROFILE=<file>` writes a V8 CPU profile
 * of the gateway from the moment it is ready to its stop (the load only, not the start-up);
 * summarise it with bench/profile-summary.ts. `BENCH_HEAP_PROFILE=<file>` likewise writes a
 * sampling heap profile of every allocation in that time, collected or not (what makes the
 * scavenges), summarised by bench/profile-summary.ts too; with `BENCH_HEAP_PROFILE_SURVIVORS=1`, only
 * what lived through a scavenge (what fills the old generation).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadSettings } from '../src/config/config.ts';
import { startPlatform } from '../src/platform.ts';
import type { Platform } from '../src/platform.ts';
import { announce, envPort, exitOnSignal } from './lib/announce.ts';
import { startBenchAuthority } from './auth-server.ts';
import { benchScript } from './lib/build.ts';
import { benchCatalog, benchOrg, benchProductText, readMode } from './portico-setup.ts';
import type { SetupResult } from './portico-setup.ts';

function runSetup(dataDir: string): SetupResult {
  // The setup runs as this file does: compiled beside it, or from TypeScript through tsx.
  const build = import.meta.url.endsWith('.js') ? 'compiled' : 'source';
  const result = spawnSync(process.execPath, benchScript(build, 'portico-setup.ts'), {
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (result.status !== 0)
    throw new Error(`bench setup failed (${result.status ?? result.signal}): ${result.stderr.slice(-2000)}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as SetupResult;
}

/** Republishes the bench product with a new description every `everyMs`; returns the tally. */
function publishEvery(platform: Platform, everyMs: number, logger: pino.Logger) {
  const tally = { publishes: 0, publishFailures: 0 };
  const timer = setInterval(() => {
    platform.services
      .ensureOrg(benchOrg)
      .then(({ orgId }) =>
        platform.services.putProduct(orgId, benchCatalog, {
          text: benchProductText('bench-product', ['bench'], tally.publishes + 1),
          file: 'bench-product.yaml',
          state: 'published',
        }),
      )
      .then(() => tally.publishes++)
      .catch((error: unknown) => {
        tally.publishFailures++;
        logger.error({ err: error }, 'bench publish failed');
      });
  }, everyMs);
  return { tally, stop: () => clearInterval(timer) };
}

/** Starts the V8 profiler in this process; the returned function stops it and writes the profile. */
async function startCpuProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

async function startHeapProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    // BENCH_HEAP_PROFILE_SURVIVORS=1: only what lived through a scavenge (promoted, or still alive at
    // the end): what the old generation, and so the mark-compacts, are made of.
    includeObjectsCollectedByMinorGC: process.env.BENCH_HEAP_PROFILE_SURVIVORS !== '1',
  });
  return async () => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** What every request sends: the client id, and the bearer token of the jwt / introspect / oauth targets. */
function benchHeaders(mode: string, clientId: string | undefined, token: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (clientId && mode !== 'introspect' && mode !== 'oauth') headers['X-IBM-Client-Id'] = clientId;
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** oauth mode: one client credentials token from this gateway (its issuer is the origin the load uses). */
async function nativeToken(gateway: string, setup: SetupResult): Promise<string> {
  const basic = Buffer.from(`${setup.clientId}:${setup.clientSecret}`).toString('base64');
  const answer = await fetch(`${gateway}${setup.tokenPath}`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&scope=read',
  });
  const body = (await answer.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`bench token request failed: ${answer.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

async function main(): Promise<void> {
  const mode = readMode();
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
  const authority = mode === 'jwt' || mode === 'introspect' ? await startBenchAuthority() : undefined;
  if (authority) process.env.BENCH_AUTH_URL = authority.url;
  const setup = runSetup(dataDir);
  if (authority) authority.clientId = setup.clientId ?? '';
  const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'warn' }, pino.destination(2));
  const settings = loadSettings(
    {
      PORTICO_GATEWAY_PORT: String(envPort('BENCH_PORT', 0)),
      PORTICO_REDIS_URL: process.env.PORTICO_REDIS_URL,
      PORTICO_SCRIPT_INLINE_US: process.env.PORTICO_SCRIPT_INLINE_US,
      PORTICO_LOG_LEVEL: 'warn',
    },
    { dataDir },
  );
  const platform = await startPlatform(settings, logger, 'gateway');
  const gateway = platform.gateway!;
  const gatewayUrl = platform.urls.gateway!.replace('0.0.0.0', '127.0.0.1');
  const token = mode === 'oauth' ? await nativeToken(gatewayUrl, setup) : authority?.token;
  const every = Number(process.env.BENCH_PUBLISH_EVERY_MS ?? 0);
  const publisher = every > 0 && mode !== 'accessories' ? publishEvery(platform, every, logger) : undefined;

  const stopProfile = process.env.BENCH_CPU_PROFILE
    ? await startCpuProfile(process.env.BENCH_CPU_PROFILE)
    : process.env.BENCH_HEAP_PROFILE
      ? await startHeapProfile(process.env.BENCH_HEAP_PROFILE)
      : undefined;
  // Event-loop delay over the run: the stalls a latency tail comes from.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  announce({
    port: Number(new URL(platform.urls.gateway!).port),
    path: Object.values(setup.paths)[0],
    headers: benchHeaders(mode, setup.clientId, token),
    facts: {
      mode,
      paths: setup.paths,
      apis: gateway.current?.apiCount,
      compileMs: gateway.current?.compileMs,
      setupMs: setup.setupMs,
      scale: setup.scale,
      redis: settings.redisUrl !== undefined,
    },
  });

  exitOnSignal(
    async () => {
      publisher?.stop();
      // The run's own tally, read by the runner.
      loopDelay.disable();
      const loop = {
        p50_ms: loopDelay.percentile(50) / 1e6,
        p99_ms: loopDelay.percentile(99) / 1e6,
        max_ms: loopDelay.max / 1e6,
      };
      process.stdout.write(
        `${JSON.stringify({ final: true, ...publisher?.tally, lastCompileMs: gateway.current?.compileMs, change: gateway.current?.change, loopDelay: loop })}\n`,
      );
      await stopProfile?.();
      await platform.close();
      authority?.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
    Number(process.env.BENCH_PROFILE_GRACE_MS ?? 3000),
  );
}

await main();
