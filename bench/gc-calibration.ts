/**
 * How long this machine takes to scavenge a fixed heap (issue 18): the same allocation pattern on
 * every run, so the figures compare machines and sessions rather than code. The latency rows of
 * `--profile tail` follow the gateway's scavenge pauses; when this probe's pauses are several
 * times those of a quiet run, so are the gateway's, whatever the code does.
 *
 *   taskset -c 1 node --import tsx bench/gc-calibration.ts [--seconds 5]
 *
 * The pattern: a retained old-generation graph (~40 MB of small objects, as a gateway's snapshot
 * and modules hold), a ring of 64 "requests in flight" (the latency generator's connections) each replaced after use (young objects
 * that survive a scavenge or two, as in-flight requests do), and garbage of about 20 KB per
 * "request" (a gateway request's allocation). Prints the scavenges (count, total and longest
 * pause, mean) and the CPU per "request".
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
const seconds = Number(values.seconds);

interface Node {
  id: number;
  name: string;
  next: Node | undefined;
  tags: string[];
}

// The retained graph, built first and promoted before the measurement starts.
const retained: Node[] = [];
for (let i = 0; i < 400_000; i++)
  retained.push({ id: i, name: `node-${i}`, next: retained[i - 1], tags: [`t${i % 100}`, 'x'] });

const pauses: number[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) pauses.push(entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

function request(i: number): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (let h = 0; h < 12; h++) headers[`x-header-${h}`] = `value-${i}-${h}`;
  const parts: string[] = [];
  for (let p = 0; p < 40; p++) parts.push(`part ${p} of request ${i}`);
  return { id: i, headers, body: parts.join(','), parsed: JSON.parse(JSON.stringify({ i, parts: parts.slice(0, 8) })) };
}

// Let the retained graph be promoted, then measure.
await new Promise((resolve) => setTimeout(resolve, 200));
pauses.length = 0;
const inFlight: Array<Record<string, unknown>> = new Array(64);
const cpuStart = process.cpuUsage();
const until = performance.now() + seconds * 1000;
let requests = 0;
while (performance.now() < until) {
  for (let k = 0; k < 200; k++, requests++) inFlight[requests % inFlight.length] = request(requests);
  // A turn of the event loop now and then, as a server has, so observer entries are delivered.
  if (requests % 20_000 === 0) await new Promise((resolve) => setImmediate(resolve));
}
await new Promise((resolve) => setTimeout(resolve, 20));
const cpu = process.cpuUsage(cpuStart);
const total = pauses.reduce((sum, ms) => sum + ms, 0);
process.stdout.write(
  `${requests} requests in ${seconds} s, ${(((cpu.user + cpu.system) / requests) * 1).toFixed(2)} CPU µs each; ` +
    `${pauses.length} scavenges, ${total.toFixed(0)} ms in all, longest ${Math.max(0, ...pauses).toFixed(2)} ms, ` +
    `mean ${(pauses.length > 0 ? total / pauses.length : 0).toFixed(2)} ms (retained ${retained.length} nodes)\n`,
);
