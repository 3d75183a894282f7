/**
 * Token issuance rate of the native OAuth provider: client credentials (`client_secret_basic`,
 * one scope) against the gateway's token endpoint, as `portico serve --role gateway` runs it.
 * Each token is an ES256 signature; nothing is written to the store (client credentials has no
 * refresh token). wrk posts the form from its own process; this process is the gateway, so its
 * CPU time over the run ÷ tokens issued is the CPU cost of one token.
 *
 *   node --import tsx bench/oauth-issuance.ts [seconds=5] [connections=8]
 *
 * Prints one JSON line: tokens/s, non-200 answers, CPU µs per token, load average.
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadSettings } from '../src/config/config.ts';
import { startPlatform } from '../src/platform.ts';
import { setUp } from './portico-setup.ts';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 8);
const dataDir = mkdtempSync(join(tmpdir(), 'portico-issuance-'));
// The bench API's backend is never called here; setup only writes its address.
process.env.BENCH_UPSTREAM_PORT ??= '9';
const setup = await setUp(dataDir, 'oauth');
const settings = loadSettings({ PORTICO_GATEWAY_PORT: '0', PORTICO_LOG_LEVEL: 'warn' }, { dataDir });
const platform = await startPlatform(settings, pino({ level: 'warn' }), 'gateway');
const port = Number(new URL(platform.urls.gateway!).port);
const pinned = cpus().length >= 2;
// As bench/run.ts: the load on core 0, the target (this process) on core 1.
if (pinned) spawnSync('taskset', ['-p', '-c', '1', String(process.pid)]);

const basic = Buffer.from(`${setup.clientId}:${setup.clientSecret}`).toString('base64');
const script = join(dataDir, 'token.lua');
writeFileSync(
  script,
  `wrk.method = "POST"\nwrk.body = "grant_type=client_credentials&scope=read"\n` +
    `wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\nwrk.headers["Authorization"] = "Basic ${basic}"\n`,
);
const url = `http://127.0.0.1:${port}${setup.tokenPath}`;
// Asynchronous: this process is the gateway, and must keep answering while wrk runs.
const wrk = async (duration: number) => {
  const args = ['-t1', `-c${connections}`, `-d${duration}s`, '-s', script, url];
  return (await promisify(execFile)(pinned ? 'taskset' : 'wrk', pinned ? ['-c', '0', 'wrk', ...args] : args)).stdout;
};
await wrk(1); // warm-up: JIT, key import
const cpuBefore = process.cpuUsage();
const output = await wrk(seconds);
const cpu = process.cpuUsage(cpuBefore);
const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0);
const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0);
const cpuUs = (cpu.user + cpu.system) / Math.max(1, requests);
process.stdout.write(
  `${JSON.stringify({ tokensPerSecond: perSecond, requests, non2xx, cpuUsPerToken: Math.round(cpuUs), connections, seconds, loadavg: loadavg().map((l) => l.toFixed(2)) })}\n`,
);
await platform.close();
rmSync(dataDir, { recursive: true, force: true });
