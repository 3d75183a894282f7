/**
 * The latency load generator (issue 18): an open loop at a fixed rate. Request i is due at
 * start + i / rate and is sent then whether or not earlier answers came back (up to
 * `BENCH_OL_CONNECTIONS` keep-alive connections; past that it queues in the agent), and its
 * latency is measured from when it was due, not from when it could be sent. A target that
 * stalls for 20 ms therefore shows the 40 requests due in that time as late, instead of a
 * generator that waits with it and records one slow answer (coordinated omission: hey's `-q`
 * paces each worker after its previous answer, wrk's closed loop likewise).
 *
 * Prints one JSON line: { requests, errors, p50Ms, p99Ms, p999Ms, maxMs, sendLagP99Ms, ... }.
 * `sendLagP99Ms` is how late this process itself sent (its own stalls); it bounds what the
 * figures can show about the target.
 */
import { Agent, request } from 'node:http';
import { percentile } from './lib/load.ts';

const url = new URL(process.env.BENCH_OL_URL ?? 'http://127.0.0.1:8080/');
const rate = Number(process.env.BENCH_OL_RATE ?? 2000);
const seconds = Number(process.env.BENCH_OL_SECONDS ?? 10);
const headers = JSON.parse(process.env.BENCH_OL_HEADERS ?? '{}') as Record<string, string>;
const agent = new Agent({ keepAlive: true, maxSockets: Number(process.env.BENCH_OL_CONNECTIONS ?? 64) });

const total = Math.round(rate * seconds);
const latencies: number[] = [];
const sendLags: number[] = [];
let errors = 0;
let transportErrors = 0;
let finished = 0;
let sent = 0;
// Due times of requests sent and not answered yet.
const pending = new Set<number>();
const start = performance.now() + 50;

function send(dueAt: number): void {
  sendLags.push(performance.now() - dueAt);
  pending.add(dueAt);
  const req = request(url, { agent, headers }, (res) => {
    if (!(res.statusCode! >= 200 && res.statusCode! < 300)) errors++;
    res.on('data', () => undefined);
    res.on('end', () => record(dueAt));
  });
  req.on('error', () => {
    transportErrors++;
    record(dueAt);
  });
  req.end();
}

function record(dueAt: number): void {
  if (!pending.delete(dueAt)) return;
  latencies.push(performance.now() - dueAt);
  if (++finished === total) report();
}

/** Sends every request due by now; a timer tick every ms (a late tick sends the backlog at once). */
function tick(): void {
  const now = performance.now();
  while (sent < total && start + (sent * 1000) / rate <= now) send(start + (sent++ * 1000) / rate);
  if (sent < total) setTimeout(tick, 1);
}

function report(unanswered = 0): void {
  latencies.sort((a, b) => a - b);
  sendLags.sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 100) / 100;
  const answered = latencies.length - transportErrors;
  console.log(
    JSON.stringify({
      requests: answered,
      errors: errors + transportErrors + unanswered,
      transportErrors,
      unanswered,
      rate,
      seconds,
      p50Ms: round(percentile(latencies, 50)),
      p99Ms: round(percentile(latencies, 99)),
      p999Ms: round(percentile(latencies, 99.9)),
      maxMs: round(latencies[latencies.length - 1] ?? NaN),
      sendLagP99Ms: round(percentile(sendLags, 99)),
      sendLagMaxMs: round(sendLags[sendLags.length - 1] ?? NaN),
    }),
  );
  agent.destroy();
  process.exit(0);
}

setTimeout(tick, Math.max(0, start - performance.now()));
/**
 * A target far behind the rate must not hang the bench: 30 s after the last request is due,
 * what is still unanswered counts as an error and enters the percentiles with the time it had
 * waited so far (a lower bound), so a stalled target cannot look fast.
 */
setTimeout(
  () => {
    const now = performance.now();
    const waiting = [...pending];
    for (const dueAt of waiting) latencies.push(now - dueAt);
    report(waiting.length + total - sent);
  },
  seconds * 1000 + 30_000,
).unref();
