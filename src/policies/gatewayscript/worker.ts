/**
 * A script worker thread (pool.ts starts it): holds one QuickJS module (engine-module.ts), compiles each script
 * once (by id) and runs it on request. The script API runs on the main thread, against the real
 * FlowContext. Under load each round trip waits for a turn of the busy main event loop (issue
 * 18), so this thread makes as few as it can:
 *
 * - Reads of the names read ahead (read-ahead.ts), sent with the run, are answered here until
 *   the script's first write; any other read is a synchronous RPC: the op is posted to the
 *   parent, the thread blocks on a shared flag with `Atomics.wait`, then takes the reply from
 *   its own port with `receiveMessageOnPort`.
 * - Writes (set, add, clear, log, reject, error) need no answer: they are queued here and sent,
 *   in order, with the next read that waits or with the run's end, and applied before it. The
 *   name is first checked here with the context's own parser, so a name the context refuses
 *   still throws inside the script, at the call. A write the main thread refuses anyway (state
 *   this thread cannot see, such as a list's length) fails the run with the same message an
 *   uncaught exception would have; a write to a list index, the one a script could expect to be
 *   refused, therefore still waits for its answer.
 * - Every write is charged to the run's write budget (write-budget.ts) before it is queued or
 *   sent: the write past it stays here, the run is stopped and fails, whatever the script does
 *   with the error, and its writes still queued are dropped (the pool undoes the ones applied).
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { EngineModule } from './engine-module.ts';
import { engineCeilingBytes } from './engine-limits.ts';
import type { ReadAheadEntry } from './read-ahead.ts';
import { ScriptSandbox } from './sandbox.ts';
import type { SandboxLimits, ScriptFailure, ScriptHost } from './sandbox.ts';
import { WriteBudget } from './write-budget.ts';
import { WriteQueue, fireAndForget, writesVariable } from './write-queue.ts';
import type { QueuedOp } from './write-queue.ts';

export type { QueuedOp };

/** A run request from the pool. */
export interface RunMessage {
  type: 'run';
  id: number;
  source: string;
  filename: string;
  limits: SandboxLimits;
  /** Bytes the run's writes may carry to the main thread (write-budget.ts). */
  writeBytes: number;
  /** Values of the names the script reads literally, read on the main thread for this run. */
  readAhead: ReadAheadEntry[];
}

/** The pool forgets a script (its step was collected). */
export interface DropMessage {
  type: 'drop';
  id: number;
}

/** What the worker posts to the pool: `ops` are applied, in order, before the rest of the message. */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'op'; op: string; a: string | undefined; b: string | undefined; ops: QueuedOp[] }
  | {
      type: 'done';
      failure: ScriptFailure | undefined;
      broken: string | undefined;
      ops: QueuedOp[];
      readAhead: number;
    };

/** The main thread's answer to one op. */
export interface OpReply {
  value?: string;
  error?: string;
}

const { flag, port, rpcWaitMs, engineBytes } = workerData as {
  flag: SharedArrayBuffer;
  port: MessagePort;
  rpcWaitMs: number;
  engineBytes?: number;
};
// Each worker thread loads its own module, so the ceiling applies per worker (pool.ts).
const engineModule = await EngineModule.load(engineBytes ?? engineCeilingBytes());
const signal = new Int32Array(flag);
const parent = parentPort!;
// Compiled engines by script id, least recently used first; each holds a QuickJS runtime.
const engines = new Map<number, ScriptSandbox>();
const maxEngines = 64;

const queue = new WriteQueue();
const budget = new WriteBudget(0);
// The engine of the run under way, stopped when the run goes past its write budget.
let running: ScriptSandbox | undefined;
// The current run's read-ahead (name → JSON text, and whether a read is reported), while valid.
let readAheadValues = new Map<string, { json: string | undefined; touch: boolean }>();
let readAheadServed = 0;

/** A read served from the read-ahead; undefined when it must go to the main thread. */
function fromReadAhead(name: string | undefined): { json: string | undefined } | undefined {
  const entry = readAheadValues.get(name ?? '');
  if (entry === undefined) return undefined;
  readAheadServed++;
  if (entry.touch) {
    queue.touch(name);
    entry.touch = false;
  }
  return entry;
}

const host: ScriptHost = {
  call(op, a, b) {
    if (op === 'get') {
      const served = fromReadAhead(a);
      if (served !== undefined) return served.json;
    }
    const queueable = fireAndForget(op, a);
    if (op !== 'get' && !budget.charge(op, a, b)) {
      // The run fails: the writes still queued never go to the main thread either.
      queue.take();
      running?.stop();
      throw new Error(budget.exceeded);
    }
    // A write may change what any name reads (one variable can hold another's tree): the
    // read-ahead is over, and later reads see the writes on the main thread.
    if (writesVariable(op)) readAheadValues.clear();
    if (queueable && queue.offer(op, a, b)) return undefined;
    Atomics.store(signal, 0, 0);
    parent.postMessage({ type: 'op', op, a, b, ops: queue.take() } satisfies WorkerReply);
    if (Atomics.wait(signal, 0, 0, rpcWaitMs) === 'timed-out')
      throw new Error(`the gateway did not answer ${op} in time`);
    const reply = receiveMessageOnPort(port)?.message as OpReply | undefined;
    if (reply === undefined) throw new Error(`no answer to ${op}`);
    if (reply.error !== undefined) throw new Error(reply.error);
    return reply.value;
  },
};

function engineFor(message: RunMessage): ScriptSandbox {
  let engine = engines.get(message.id);
  if (engine !== undefined) {
    engines.delete(message.id);
  } else {
    engine = new ScriptSandbox(message.source, message.limits, message.filename, engineModule);
    if (engines.size >= maxEngines) drop(engines.keys().next().value as number);
  }
  engines.set(message.id, engine);
  return engine;
}

function drop(id: number): void {
  engines.get(id)?.dispose();
  engines.delete(id);
}

function run(message: RunMessage): ScriptFailure | undefined {
  queue.take();
  budget.reset(message.writeBytes);
  readAheadServed = 0;
  readAheadValues = new Map(message.readAhead.map(([name, json, touch]) => [name, { json, touch }]));
  let failure: ScriptFailure | undefined;
  try {
    running = engineFor(message);
    failure = running.run(host);
  } catch (error) {
    failure = { kind: 'exception', message: (error as Error).message };
  } finally {
    running = undefined;
  }
  if (budget.exceeded === undefined) return failure;
  queue.take();
  return { kind: 'writes', message: budget.exceeded };
}

parent.on('message', (message: RunMessage | DropMessage) => {
  if (message.type === 'drop') {
    drop(message.id);
    return;
  }
  const failure = run(message);
  readAheadValues.clear();
  const ops = queue.take();
  parent.postMessage({
    type: 'done',
    failure,
    broken: engineModule.broken,
    ops,
    readAhead: readAheadServed,
  } satisfies WorkerReply);
});
parent.postMessage({ type: 'ready' } satisfies WorkerReply);
