/**
 * The latency load generator (issue 18): an open loop at a fixed rate. Request i is due at
 * start + i / rate and is sent then whether or not earlier answers came back, and its latency is
 * measured from when it was due, not from when it could be sent. A target that stalls for 20 ms
 * therefore shows the 40 requests due in that time as late, instead of a generator that waits
 * with it and records one slow answer (coordinated omission: hey's `-q` paces each worker after
 * its previous answer, wrk's closed loop likewise).
 *
 * It is built to add as little of its own tail as it can, since it shares core 0 with the
 * backend: raw `node:net` keep-alive connections (`BENCH_OL_CONNECTIONS`, default 64, all opened
 * before the clock starts), one request outstanding on each (no pipelining), each request one
 * pre-built Buffer written with one `write`; every read into one reused buffer (`onread`),
 * framed by lib/http-response.ts without strings or objects per response; times in
 * preallocated Float64Arrays. A request due while every connection is busy waits for the first
 * one free, and its latency still counts from its due time. Requests are sent when a clock
 * worker thread wakes this one at their due time (everything due by then) and whenever an
 * answer frees a connection; nothing spins.
 *
 * Env: BENCH_OL_URL (http only), BENCH_OL_RATE (req/s), BENCH_OL_SECONDS, BENCH_OL_HEADERS (JSON),
 * BENCH_OL_CONNECTIONS, BENCH_OL_TICK (`worker`, the default, or `timer`: a 1 ms tick). Prints one JSON line: { requests, errors, p50Ms, p99Ms, p999Ms, maxMs,
 * sendLagP99Ms, ... }. `sendLag*` is how late this process itself got to a request after it was
 * due (its clock's granularity, its own stalls); it bounds what the figures can show about the
 * target. `service*` is from the write to the answer (what the target and the network took).
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { MALFORMED, NEED_MORE, ResponseParser } from './lib/http-response.ts';
import { percentile } from './lib/load.ts';

const url = new URL(process.env.BENCH_OL_URL ?? 'http://127.0.0.1:8080/');
const rate = Number(process.env.BENCH_OL_RATE ?? 2000);
const seconds = Number(process.env.BENCH_OL_SECONDS ?? 10);
const headers = JSON.parse(process.env.BENCH_OL_HEADERS ?? '{}') as Record<string, string>;
const connections = Number(process.env.BENCH_OL_CONNECTIONS ?? 64);
const clock = process.env.BENCH_OL_TICK ?? 'worker';
if (clock !== 'worker' && clock !== 'timer') throw new Error('BENCH_OL_TICK is worker or timer');
if (url.protocol !== 'http:') throw new Error(`open-loop.ts speaks plain http only, not ${url.protocol}`);
if (!(rate > 0 && seconds > 0 && connections >= 1))
  throw new Error('BENCH_OL_RATE, _SECONDS, _CONNECTIONS must be > 0');

const request = requestBytes();
const total = Math.round(rate * seconds);
const interval = 1000 / rate;

// Per request, by index: how late the generator got to it after it was due.
const sendLags = new Float64Array(total);
// In answer order: latency from the due time, and from the write.
const latencies = new Float64Array(total);
const services = new Float64Array(total);
const writtenAt = new Float64Array(total);
let recorded = 0;
let serviced = 0;
/** Requests due and seen by the generator (their send lag recorded); those past `sent` wait for a connection. */
let released = 0;
let sent = 0;
let nonSuccess = 0;
let transportErrors = 0;
let malformed = 0;
let chunkedResponses = 0;
let waitedForConnection = 0;
let connectionWaitMaxMs = 0;
let busy = 0;
let busyMax = 0;
let start = Infinity;
let cpuAtStart: NodeJS.CpuUsage | undefined;
let finished = false;
const gc = { count: 0, totalMs: 0, maxMs: 0 };

interface Connection {
  socket: Socket | undefined;
  parser: ResponseParser;
  /** The request outstanding on it, or -1. */
  index: number;
  connected: boolean;
}

const idle: Connection[] = [];
const pool: Connection[] = [];

function requestBytes(): Buffer {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`];
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'host')) lines.push(`Host: ${url.host}`);
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(name + value)) throw new Error(`header ${name} holds a line break`);
    lines.push(`${name}: ${value}`);
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

function dueAt(index: number): number {
  return start + index * interval;
}

/** Records the send lag of every request due by `now`. */
function release(now: number): void {
  while (released < total && dueAt(released) <= now) {
    sendLags[released] = now - dueAt(released);
    released++;
  }
}

/** Sends the requests released and not sent yet, one on each idle connection. */
function dispatch(now: number): void {
  while (sent < released && idle.length > 0) {
    const connection = idle.pop()!;
    const index = sent++;
    const wait = now - dueAt(index) - sendLags[index];
    if (wait > 0) {
      waitedForConnection++;
      if (wait > connectionWaitMaxMs) connectionWaitMaxMs = wait;
    }
    connection.index = index;
    writtenAt[index] = now;
    if (++busy > busyMax) busyMax = busy;
    connection.socket!.write(request);
  }
}

function tick(): void {
  if (finished) return;
  const now = performance.now();
  release(now);
  dispatch(now);
  if (released < total && clock === 'timer')
    setTimeout(tick, Math.max(1, Math.floor(dueAt(released) - performance.now())));
}

/**
 * The clock (default; `BENCH_OL_TICK=timer` uses a 1 ms setTimeout tick instead): a worker
 * thread sleeps in Atomics.wait (no spinning) until each request is due, then wakes this thread
 * with a message. libuv's timers have 1 ms granularity, so the tick got to a request ~0.5 ms
 * after it was due at p50; the worker's wake-up ~0.1 ms, for ~7 % more of core 0's CPU
 * (bench/README.md, "Latency generator").
 */
const clockWorker = `
const { parentPort, workerData } = require('node:worker_threads');
const { startAt, interval, total } = workerData;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
let next = 0;
while (next < total) {
  const now = performance.timeOrigin + performance.now();
  const due = startAt + next * interval;
  if (due > now) {
    Atomics.wait(sleeper, 0, 0, due - now);
    continue;
  }
  parentPort.postMessage(0);
  next = Math.floor((now - startAt) / interval) + 1;
}
`;

/** The request outstanding on `connection` is over (answered, failed or malformed) at `now`. */
function settle(connection: Connection, now: number, answered: boolean): void {
  const index = connection.index;
  connection.index = -1;
  busy--;
  latencies[recorded++] = now - dueAt(index);
  if (answered) services[serviced++] = now - writtenAt[index];
  if (recorded === total) report(0);
}

/** Every read lands in this one buffer (it is parsed before the next read): no Buffer per read. */
const readBuffer = Buffer.alloc(64 * 1024);

function onData(connection: Connection, length: number): void {
  const buf = readBuffer;
  const parser = connection.parser;
  let at = 0;
  while (at < length) {
    // Bytes with no request outstanding, or that do not frame, end the connection.
    const end = connection.index < 0 ? MALFORMED : parser.execute(buf, at, length);
    if (end === NEED_MORE) return;
    if (end === MALFORMED) return fail(connection);
    at = end;
    const now = performance.now();
    if (!(parser.status >= 200 && parser.status < 300)) nonSuccess++;
    if (parser.chunked) chunkedResponses++;
    settle(connection, now, true);
    if (finished) return;
    if (parser.close) {
      if (at < length) return fail(connection);
      connection.socket!.destroy();
      return;
    }
    idle.push(connection);
    release(now);
    dispatch(now);
  }
}

/** A malformed answer: counted, and the connection closed (and opened again). */
function fail(connection: Connection): void {
  malformed++;
  if (connection.index >= 0) settle(connection, performance.now(), false);
  connection.socket!.destroy();
}

function onClose(connection: Connection, socket: Socket): void {
  if (connection.socket !== socket) return;
  const wasConnected = connection.connected;
  connection.connected = false;
  connection.socket = undefined;
  const slot = idle.indexOf(connection);
  if (slot >= 0) idle.splice(slot, 1);
  if (connection.index >= 0) {
    const now = performance.now();
    if (connection.parser.finish()) {
      // Framed by the close (no length, not chunked): an answer, not an error.
      if (!(connection.parser.status >= 200 && connection.parser.status < 300)) nonSuccess++;
      settle(connection, now, true);
    } else {
      transportErrors++;
      settle(connection, now, false);
    }
  }
  if (finished) return;
  // Open it again; a target that refuses connections is retried every 100 ms, not in a spin.
  setTimeout(() => open(connection), wasConnected ? 0 : 100);
}

function open(connection: Connection, onFirstConnect?: (error?: Error) => void): void {
  const socket = connect({
    host: url.hostname,
    port: Number(url.port || 80),
    noDelay: true,
    // The callback is given `readBuffer` itself; returning false would pause reading.
    onread: {
      buffer: readBuffer,
      callback: (length) => {
        onData(connection, length);
        return true;
      },
    },
  });
  connection.socket = socket;
  connection.parser = new ResponseParser();
  socket.on('connect', () => {
    connection.connected = true;
    const first = onFirstConnect;
    onFirstConnect = undefined;
    first?.();
    idle.push(connection);
    if (start !== Infinity) dispatch(performance.now());
  });
  socket.on('error', (error) => onFirstConnect?.(error));
  socket.on('close', () => {
    onFirstConnect = undefined;
    onClose(connection, socket);
  });
}

function report(unanswered: number): void {
  finished = true;
  const round = (value: number) => Math.round(value * 100) / 100;
  const sorted = (values: Float64Array, count: number) => values.subarray(0, count).sort();
  const answered = sorted(latencies, recorded);
  const lags = sorted(sendLags, released);
  const service = sorted(services, serviced);
  // The generator's own CPU (all threads) from the clock's start: what it took from core 0.
  const cpu = cpuAtStart && process.cpuUsage(cpuAtStart);
  console.log(
    JSON.stringify({
      requests: recorded - transportErrors - malformed - unanswered,
      errors: nonSuccess + transportErrors + malformed + unanswered,
      transportErrors,
      malformed,
      unanswered,
      rate,
      seconds,
      p50Ms: round(percentile(answered, 50)),
      p99Ms: round(percentile(answered, 99)),
      p999Ms: round(percentile(answered, 99.9)),
      maxMs: round(answered[answered.length - 1] ?? NaN),
      sendLagP50Ms: round(percentile(lags, 50)),
      sendLagP99Ms: round(percentile(lags, 99)),
      sendLagMaxMs: round(lags[lags.length - 1] ?? NaN),
      serviceP50Ms: round(percentile(service, 50)),
      serviceP99Ms: round(percentile(service, 99)),
      serviceP999Ms: round(percentile(service, 99.9)),
      serviceMaxMs: round(service[service.length - 1] ?? NaN),
      connections,
      connectionsBusyMax: busyMax,
      waitedForConnection,
      connectionWaitMaxMs: round(connectionWaitMaxMs),
      chunkedResponses,
      generatorGc: { count: gc.count, totalMs: round(gc.totalMs), maxMs: round(gc.maxMs) },
      generatorClock: clock,
      generatorCpuMs: cpu === undefined ? undefined : round((cpu.user + cpu.system) / 1000),
    }),
  );
  for (const connection of pool) connection.socket?.destroy();
  process.exit(0);
}

/**
 * A target far behind the rate must not hang the bench: 30 s after the last request is due,
 * what is still unanswered (sent, or waiting for a connection) counts as an error and enters the
 * percentiles with the time it had waited so far (a lower bound), so a stalled target cannot
 * look fast.
 */
function deadline(): void {
  const now = performance.now();
  release(now);
  let unanswered = total - released;
  for (const connection of pool) {
    if (connection.index < 0) continue;
    latencies[recorded++] = now - dueAt(connection.index);
    unanswered++;
  }
  for (let index = sent; index < released; index++) {
    latencies[recorded++] = now - dueAt(index);
    unanswered++;
  }
  report(unanswered);
}

// Every connection is open before the clock starts; one that cannot be opened fails the run.
let opened = 0;
for (let i = 0; i < connections; i++) {
  const connection: Connection = { socket: undefined, parser: new ResponseParser(), index: -1, connected: false };
  pool.push(connection);
  open(connection, (error) => {
    if (error) {
      console.error(`open-loop.ts: cannot connect to ${url.host}: ${error.message}`);
      process.exit(1);
    }
    if (++opened < connections) return;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        gc.count++;
        gc.totalMs += entry.duration;
        if (entry.duration > gc.maxMs) gc.maxMs = entry.duration;
      }
    }).observe({ entryTypes: ['gc'] });
    const delay = clock === 'worker' ? 200 : 50;
    start = performance.now() + delay;
    cpuAtStart = process.cpuUsage();
    if (clock === 'worker') {
      const worker = new Worker(clockWorker, {
        eval: true,
        workerData: { startAt: performance.timeOrigin + start, interval, total },
      });
      worker.on('message', tick);
      worker.on('error', (error) => {
        console.error(`open-loop.ts: the clock worker failed: ${error.message}`);
        process.exit(1);
      });
      worker.unref();
    } else setTimeout(tick, delay);
    setTimeout(deadline, delay + seconds * 1000 + 30_000).unref();
  });
}
