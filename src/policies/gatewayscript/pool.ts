/**
 * GatewayScript runs in a pool of worker threads, so a script that spins to its time limit never
 * holds the gateway's event loop. Each worker (worker.ts) loads its own QuickJS module; the
 * script API is a synchronous RPC back to this thread, which runs every operation against the
 * request's FlowContext (ScriptHost), exactly as an in-process engine would.
 *
 * Bounds: one API holds at most `perApi` workers at once (default workers − 1, at least 1), so
 * another API's script still finds a worker; a run waits in the queue at most `queueMs` (by
 * default its own time limit; then {@link ScriptBusyError}); a worker that does not answer within the time limit plus
 * `graceMs` is terminated and replaced, as is one whose QuickJS module broke (engine-module.ts). Workers are unreferenced: only pending runs keep a process alive.
 * What one run's writes carry to this thread is bounded by `writeBytes` (write-budget.ts): the
 * watchdog bounds a run's time, not what it leaves on this thread's heap.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { scriptWriteBytes } from './engine-limits.ts';
import type { ReadAheadEntry } from './read-ahead.ts';
import type { ScriptFailure, ScriptHost, SandboxLimits } from './sandbox.ts';
import type { OpReply, RunMessage, WorkerReply } from './worker.ts';
import { applyQueued } from './write-queue.ts';
import type { QueuedOp } from './write-queue.ts';

export interface ScriptPoolOptions {
  /** Worker threads (`PORTICO_SCRIPT_WORKERS`). */
  workers: number;
  /** Most workers one API may occupy at once; default max(1, workers − 1). */
  perApi?: number;
  /** How long past its time limit a run may take before its worker is terminated. */
  graceMs: number;
  /**
   * Longest a run waits for a free worker before it is refused (`PORTICO_SCRIPT_QUEUE_MS`);
   * default: the run's own time limit. Under load, calls of one busy API queue behind each other.
   */
  queueMs?: number;
  /** WebAssembly memory ceiling of each worker's engine. */
  engineBytes: number;
  /** Bytes one run's writes may carry to this thread; default `PORTICO_SCRIPT_WRITE_BYTES` (engine-limits.ts). */
  writeBytes?: number;
}

/** A compiled script as the pool runs it; `id` is unique per compiled policy, `api` groups the cap. */
export interface PooledScript {
  id: number;
  api: string;
  source: string;
  filename: string;
  limits: SandboxLimits;
  /** Variables the script names literally, read ahead and sent with each run (read-ahead.ts). */
  reads?: readonly string[];
}

/** The request's side of a run: its ops, and the values of `names` read now for the worker. */
export interface JobHost extends ScriptHost {
  readAhead?(names: readonly string[]): ReadAheadEntry[];
}

/** A run that found no free worker within its own time limit. */
export class ScriptBusyError extends Error {
  constructor(readonly waitedMs: number) {
    super(`no script worker was free within ${waitedMs} ms`);
    this.name = 'ScriptBusyError';
  }
}

interface Job {
  script: PooledScript;
  host: JobHost;
  resolve(failure: ScriptFailure | undefined): void;
  reject(error: Error): void;
  timer?: NodeJS.Timeout;
  /** The first write the run queued without waiting that this thread refused (worker.ts). */
  writeError?: string;
}

interface Slot {
  worker: Worker;
  flag: Int32Array;
  port: MessagePort;
  ready: boolean;
  job?: Job;
  watchdog?: NodeJS.Timeout;
}

const here = import.meta.url;
const typescript = here.endsWith('.ts');
const entry = new URL(typescript ? './worker.ts' : './worker.js', here);
// Longest a worker blocks on one op before giving up on the main thread (60 s: the largest timeout setting).
const rpcWaitMs = 60_000;

/**
 * A worker does not inherit the tsx loader that bin/portico.js registers in the main thread, so
 * under TypeScript sources the worker registers it before importing its entry.
 */
function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  if (!typescript) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}

/** Worker threads that run compiled scripts; `run` resolves with the run's failure, if any. */
export class ScriptPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly busy = new Map<string, number>();
  private readonly perApi: number;
  private readonly writeBytes: number;
  private closed = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private readonly counts = { answered: 0, applied: 0, readAhead: 0 };

  constructor(private readonly options: ScriptPoolOptions) {
    this.perApi = Math.min(options.workers, options.perApi ?? Math.max(1, options.workers - 1));
    this.writeBytes = options.writeBytes ?? scriptWriteBytes();
  }

  /** Starts the workers now rather than at the first run. */
  start(): void {
    while (!this.closed && this.slots.length < this.options.workers) this.spawn();
  }

  run(script: PooledScript, host: JobHost): Promise<ScriptFailure | undefined> {
    if (this.closed) return Promise.reject(new ScriptBusyError(0));
    this.start();
    return new Promise((resolve, reject) => {
      const job: Job = { script, host, resolve, reject };
      this.queue.push(job);
      if (this.slots.some((slot) => slot.ready)) this.startWaiting(job);
      this.dispatch();
    });
  }

  /**
   * Script API ops so far: `answered` ones kept a worker waiting for a turn of this thread's
   * event loop; `applied` ones (writes, sent in batches) and `readAhead` ones (reads answered from
   * the values sent with the run) did not (bench/gatewayscript-cost.ts, tests).
   */
  opCounts(): { answered: number; applied: number; readAhead: number } {
    return { ...this.counts };
  }

  /** Forgets a compiled script in every worker. */
  drop(id: number): void {
    for (const slot of this.slots) if (slot.ready) slot.worker.postMessage({ type: 'drop', id });
  }

  /** Terminates every worker; queued runs fail with {@link ScriptBusyError}. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      clearTimeout(job.timer);
      job.reject(new ScriptBusyError(0));
    }
    const slots = this.slots.splice(0);
    for (const slot of slots) this.settle(slot, { kind: 'exception', message: 'the gateway is shutting down' });
    this.holdWhileBusy();
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private spawn(): void {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    const worker = startWorker({
      workerData: { flag: flag.buffer, port: port2, rpcWaitMs, engineBytes: this.options.engineBytes },
      transferList: [port2],
      // QuickJS recursion runs on the thread's native stack: a large one lets QuickJS report its
      // own stack overflow before the host's. The V8 heap only holds op values in transit.
      resourceLimits: { stackSizeMb: 64, maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
    });
    const slot: Slot = { worker, flag, port: port1, ready: false };
    worker.on('message', (message: WorkerReply) => this.onMessage(slot, message));
    worker.on('error', (error) => this.onExit(slot, `the script worker failed: ${error.message}`));
    worker.on('exit', (code) => this.onExit(slot, `the script worker stopped (exit code ${code})`));
    // Workers never keep the process alive (holdWhileBusy does while runs are pending).
    // After the listeners: adding a 'message' listener refs the worker's port again.
    port1.unref();
    worker.unref();
    this.slots.push(slot);
  }

  private onMessage(slot: Slot, message: WorkerReply): void {
    if (message.type === 'op') {
      this.applyAll(slot.job, message.ops);
      this.answer(slot, message.op, message.a, message.b);
    } else if (message.type === 'ready') {
      slot.ready = true;
      for (const job of this.queue) if (job.timer === undefined) this.startWaiting(job);
      this.dispatch();
    } else {
      this.applyAll(slot.job, message.ops);
      this.counts.readAhead += message.readAhead;
      const writeError = slot.job?.writeError;
      this.settle(
        slot,
        writeError === undefined ? message.failure : { kind: 'exception', message: `Error: ${writeError}` },
      );
      if (message.broken !== undefined) this.retire(slot);
      this.dispatch();
    }
  }

  /**
   * Applies, in order, the writes the worker queued without waiting (and the read-ahead reads it
   * reports, `touch`). Once one is refused, the script would have stopped there had it waited:
   * later ops of the run are refused too, and the run fails with it.
   */
  private applyAll(job: Job | undefined, ops: readonly QueuedOp[]): void {
    if (job === undefined || job.writeError !== undefined) return;
    const { applied, error } = applyQueued(job.host, ops);
    this.counts.applied += applied;
    job.writeError = error;
  }

  /** Runs one script API op on this thread and wakes the worker blocked on it. */
  private answer(slot: Slot, op: string, a: string | undefined, b: string | undefined): void {
    let reply: OpReply;
    this.counts.answered++;
    try {
      if (slot.job === undefined) throw new Error('the script API is only available while the script runs');
      if (slot.job.writeError !== undefined) throw new Error(slot.job.writeError);
      reply = { value: slot.job.host.call(op, a, b) };
    } catch (error) {
      reply = { error: (error as Error).message };
    }
    slot.port.postMessage(reply);
    Atomics.store(slot.flag, 0, 1);
    Atomics.notify(slot.flag, 0);
  }

  private startWaiting(job: Job): void {
    const waitMs = this.options.queueMs ?? job.script.limits.timeoutMs;
    job.timer = setTimeout(() => {
      const index = this.queue.indexOf(job);
      if (index < 0) return;
      this.queue.splice(index, 1);
      job.reject(new ScriptBusyError(waitMs));
      this.holdWhileBusy();
    }, waitMs);
    job.timer.unref();
  }

  /** Gives each idle worker the oldest queued run whose API is under its cap. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.job !== undefined) continue;
      const index = this.queue.findIndex((job) => (this.busy.get(job.script.api) ?? 0) < this.perApi);
      if (index < 0) break;
      const [job] = this.queue.splice(index, 1);
      this.assign(slot, job!);
    }
    this.holdWhileBusy();
  }

  /** Workers are unreferenced; a referenced timer keeps the process alive while runs wait or run. */
  private holdWhileBusy(): void {
    const busy = this.queue.length > 0 || this.slots.some((slot) => slot.job !== undefined);
    if (busy && this.keepAlive === undefined) this.keepAlive = setInterval(() => undefined, 60_000);
    if (!busy && this.keepAlive !== undefined) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }

  private assign(slot: Slot, job: Job): void {
    clearTimeout(job.timer);
    slot.job = job;
    this.busy.set(job.script.api, (this.busy.get(job.script.api) ?? 0) + 1);
    const { id, source, filename, limits, reads = [] } = job.script;
    let readAhead: ReadAheadEntry[] = [];
    try {
      if (reads.length > 0) readAhead = job.host.readAhead?.(reads) ?? [];
    } catch {
      // Nothing read ahead: every read goes to this thread.
    }
    const run: RunMessage = { type: 'run', id, source, filename, limits, writeBytes: this.writeBytes, readAhead };
    slot.worker.postMessage(run);
    slot.watchdog = setTimeout(() => {
      this.settle(slot, {
        kind: 'timeout',
        message: `the script ran longer than its limit of ${limits.timeoutMs} ms and was stopped`,
      });
      this.retire(slot);
      this.dispatch();
    }, limits.timeoutMs + this.options.graceMs);
  }

  /** Ends the slot's current run, if any, with `failure`. */
  private settle(slot: Slot, failure: ScriptFailure | undefined): void {
    clearTimeout(slot.watchdog);
    const job = slot.job;
    if (job === undefined) return;
    slot.job = undefined;
    const count = (this.busy.get(job.script.api) ?? 1) - 1;
    if (count > 0) this.busy.set(job.script.api, count);
    else this.busy.delete(job.script.api);
    job.resolve(failure);
  }

  /** Terminates a worker that cannot be trusted any more and starts a fresh one. */
  private retire(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    void slot.worker.terminate();
    if (!this.closed) this.spawn();
  }

  private onExit(slot: Slot, reason: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    this.settle(slot, { kind: 'memory', message: reason });
    if (slot.ready) {
      if (!this.closed) this.spawn();
    } else if (!this.slots.some((other) => other.ready)) {
      // A worker that cannot start would fail the same way again: fail what waits; the next run retries.
      for (const job of this.queue.splice(0)) {
        clearTimeout(job.timer);
        job.resolve({ kind: 'exception', message: reason });
      }
    }
    this.dispatch();
  }
}

let shared: ScriptPool | undefined;

/** The process's pool for steps compiled without one in their settings (defaults; tests, tools). */
export function sharedScriptPool(engineBytes: number): ScriptPool {
  shared ??= new ScriptPool({ workers: 2, graceMs: 1000, engineBytes });
  return shared;
}
