/**
 * What one activity event costs in CPU, stage by stage (issue 18: portico-full's activity log),
 * on a real SQLite file migrated as the gateway's store is:
 *
 *   node --import tsx bench/activity-cost.ts [--events 20000] [--batch 500] [--rounds 3]
 *
 * - "build": `buildActivityEvent` for a portico-full call (content `activity`, a subscribed app);
 * - "batch": what the gateway thread does to a batch before the hand-off (`sqliteBatch` below: the
 *   event rows and the rollups summed from them);
 * - "hand-off": `postMessage` of that batch to a thread that only answers (the structured clone
 *   out and in, both threads' CPU);
 * - "thread": the same batches written by the gateway's `SqliteWriterThread` (the hand-off, then
 *   its transaction: event inserts with their indexes, rollup upserts); "write" below the table
 *   is thread minus hand-off;
 * - "sink": the whole path after the build, through a real `AnalyticsSink` and its writer thread
 *   (record, batch, hand-off, write) — the check that the stages add up;
 * - "requests" / "requests+log": each event built and recorded amid a request's other
 *   allocations, with turns of the event loop (below); the difference is what the log adds,
 *   garbage collection included.
 * CPU µs per event = this process's user+system time (all threads) / events; "main" = the gateway
 * thread's own (Linux `/proc/thread-self/stat`, 10 ms ticks), and its scavenges (count, ms) —
 * what the activity log costs the event loop, less noisy on a shared machine than the CPU total. Events carry the
 * bench's dimensions (one API, one app, one plan) with a spread of operations, statuses and
 * latencies, so a batch of 500 sums into a handful of rollup rows as portico-full's does. Rounds
 * alternate the stages, and the table gives each round, so the spread on a shared machine shows.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { ScopeRefs } from '../src/analytics/scope-refs.ts';
import { AnalyticsSink } from '../src/analytics/sink.ts';
import { SqliteWriterThread } from '../src/analytics/sqlite-writer.ts';
import { buildActivityEvent } from '../src/gateway/activity.ts';
import type { CompiledApi, CredentialInfo, SubscriptionInfo } from '../src/gateway/snapshot.ts';
import { rollupValues } from '../src/store/analytics-writes.ts';
import { aggregateRollup } from '../src/store/rollup.ts';
import type { NewActivityEvent } from '../src/store/schema.ts';
import { openStore } from '../src/store/store.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
  },
});
const total = Number(values.events);
const batchSize = Number(values.batch);
const rounds = Number(values.rounds);

const dir = mkdtempSync(join(tmpdir(), 'portico-activity-cost-'));
const file = join(dir, 'portico.db');
const store = await openStore(`sqlite:${file}`);

// The fields of a compiled API that an activity event reads (the bench's `full` API).
const api = {
  name: 'bench-full',
  version: '1.0.0',
  orgName: 'bench',
  catalogName: 'sandbox',
  definition: { activityLog: { enabled: true, successContent: 'activity', errorContent: 'activity' } },
  credentialNames: { headers: new Set(['x-ibm-client-id']), query: new Set<string>() },
} as unknown as CompiledApi;
const credential = {
  app: { id: 'app-0001', title: 'Bench App', consumerOrgId: 'corg-0001', consumerOrgName: 'bench-developers' },
} as unknown as CredentialInfo;
const subscription = {
  id: 'sub-0001',
  planId: 'plan-0001',
  productName: 'bench-product',
  planName: 'default',
} as unknown as SubscriptionInfo;

const req = new IncomingMessage(new Socket());
req.method = 'GET';
req.url = '/bench/sandbox/full/item?zip=90210';
req.headers = { host: '127.0.0.1:8080', 'x-ibm-client-id': '0123456789abcdef0123456789abcdef' };

const statuses = [200, 200, 200, 200, 200, 200, 200, 404, 429, 500];
const operations = [{ id: 'getItem' }, { id: 'listItems' }, { id: 'putItem' }];

function build(i: number): NewActivityEvent | undefined {
  return buildActivityEvent({
    req,
    responseHeaders: () => ({}),
    status: statuses[i % statuses.length],
    txId: `tx-${i}-0123456789abcdef`,
    latencyMs: 0.4 + (i % 37) * 0.13,
    api,
    operation: operations[i % operations.length] as never,
    clientId: '0123456789abcdef0123456789abcdef',
    credential,
    subscription,
    backendMs: 0.2 + (i % 17) * 0.05,
    errorName: undefined,
    requestBody: undefined,
    responseBody: undefined,
    maxPayloadBytes: 65_536,
  });
}

const events: NewActivityEvent[] = [];
for (let i = 0; i < total; i++) events.push(build(i)!);
const batches: NewActivityEvent[][] = [];
for (let i = 0; i < total; i += batchSize) batches.push(events.slice(i, i + batchSize));

function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** This thread's user+system CPU time in µs (10 ms ticks). */
function mainThreadMicros(): number {
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

// Scavenges of this thread, as the gateway's `loop_stats.gc` counts them.
const scavenges = { count: 0, ms: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (
      (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MINOR
    )
      continue;
    scavenges.count++;
    scavenges.ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

interface Measured {
  cpu: number;
  main: number;
  scavenges: number;
  scavengeMs: number;
}

async function measure(run: () => Promise<void> | void): Promise<Measured> {
  const start = cpuMicros();
  const mainStart = mainThreadMicros();
  const before = { ...scavenges };
  await run();
  // The observer is called asynchronously: let the last entries in.
  await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    cpu: (cpuMicros() - start) / total,
    main: (mainThreadMicros() - mainStart) / total,
    scavenges: scavenges.count - before.count,
    scavengeMs: scavenges.ms - before.ms,
  };
}

// A thread that takes the batches and only answers: what the hand-off alone costs.
const echo = new Worker(
  `const { parentPort } = require('node:worker_threads');
   parentPort.on('message', (m) => parentPort.postMessage(m.id));`,
  { eval: true },
);
let echoed: (() => void) | undefined;
echo.on('message', () => echoed?.());
function handOff(message: unknown): Promise<void> {
  return new Promise((resolve) => {
    echoed = resolve;
    echo.postMessage(message);
  });
}

// The writer thread itself (the gateway's), given the batches already made.
const thread = new SqliteWriterThread({
  file,
  maxQueued: total,
  onReport: () => undefined,
  onStopped: () => undefined,
});

// One sink for the run, as a gateway has: its thread starts once.
const sink = new AnalyticsSink({ store, logger: pino({ level: 'silent' }), batchSize, flushMs: 1000 });

/** A batch as the sink hands it over: its calls with their scopes' refs (each scope sent once), and its rollup rows. */
function sqliteBatch(batch: readonly NewActivityEvent[], refs: ScopeRefs) {
  return { part: refs.chunk(batch), rollups: rollupValues(aggregateRollup(batch)) };
}
const batchRefs = new ScopeRefs();
const prepared = batches.map((batch) => sqliteBatch(batch, new ScopeRefs()));
// The thread is sent every batch's scopes (each batch made with refs of its own, all from 0).

const stages: Record<string, () => Promise<void> | void> = {
  build: () => {
    for (let i = 0; i < total; i++) build(i);
  },
  batch: () => {
    for (const batch of batches) sqliteBatch(batch, batchRefs);
  },
  'hand-off': async () => {
    let id = 0;
    for (const { part, rollups } of prepared) await handOff({ id: id++, ...part, rollups });
  },
  thread: async () => {
    for (const { part, rollups } of prepared) await thread.end(part, rollups, true);
  },
  sink: async () => {
    for (const event of events) sink.record(event);
    await sink.flush();
  },
  // As in a gateway: each event built and recorded amid a request's other allocations (~24 KB,
  // bench/README.md), a turn of the event loop every few calls, so events live until their batch
  // is handed off and the scavenger copies or promotes them. Minus "requests", what the log adds.
  requests: () => calls(false),
  'requests+log': () => calls(true),
};

let retained: unknown[] = [];
async function calls(log: boolean): Promise<void> {
  for (let i = 0; i < total; i++) {
    const garbage: unknown[] = [];
    for (let k = 0; k < 200; k++) garbage.push({ k, text: `header-${k}` });
    retained = garbage;
    if (log) sink.record(build(i)!);
    if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
  }
  if (log) await sink.flush();
}

// Warm-up: each stage once (JIT, the thread's start, the file's first pages).
for (const run of Object.values(stages)) await run();

const measured: Record<string, Measured[]> = Object.fromEntries(Object.keys(stages).map((name) => [name, []]));
for (let round = 0; round < rounds; round++)
  for (const [name, run] of Object.entries(stages)) measured[name].push(await measure(run));
const results = Object.fromEntries(Object.entries(measured).map(([name, ms]) => [name, ms.map((m) => m.cpu)]));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`${total} events, batches of ${batchSize}, ${rounds} rounds; CPU µs per event`);
console.log('stage         median  rounds              | main thread: µs/event  scavenges (ms)');
for (const [name, ms] of Object.entries(measured)) {
  const xs = ms.map((m) => m.cpu);
  const main = ms.map((m) => m.main.toFixed(1)).join(' ');
  const gc = ms.map((m) => `${m.scavenges} (${m.scavengeMs.toFixed(1)})`).join(' ');
  console.log(
    `${name.padEnd(12)} ${median(xs).toFixed(2).padStart(6)}  ${xs.map((x) => x.toFixed(2)).join(' ')}  | ${main}  ${gc}`,
  );
}
const stored = store.sqlite!.prepare('select count(*) as n from activity_events').get() as { n: number };
console.log(`(${stored.n} events stored; ${retained.length})`);
const write = results.thread.map((x, i) => x - results['hand-off'][i]);
console.log(
  `write = thread - hand-off: median ${median(write).toFixed(2)}  rounds ${write.map((x) => x.toFixed(2)).join(' ')}`,
);
const added = results['requests+log'].map((x, i) => x - results.requests[i]);
console.log(
  `log added to requests: median ${median(added).toFixed(2)}  rounds ${added.map((x) => x.toFixed(2)).join(' ')}`,
);

await thread.close();
await sink.close();
await echo.terminate();
await store.close();
rmSync(dir, { recursive: true, force: true });
