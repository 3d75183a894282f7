/**
 * A script worker thread (pool.ts starts it): holds one QuickJS module, compiles each script
 * once (by id) and runs it on request. The script API is a synchronous RPC to the main thread,
 * which runs every operation against the real FlowContext: the op is posted to the parent, the
 * thread blocks on a shared flag with `Atomics.wait`, then takes the reply from its own port
 * with `receiveMessageOnPort`.
 *
 * Writes (set, add, clear, log, reject, error) need no answer, so they are posted without waiting
 * (issue 18: under load each wait is a turn of the busy main event loop). Messages on one port
 * arrive in order, so a later get sees them. The name is first checked here with the context's
 * own parser, so a name the context refuses still throws inside the script, at the call. A write
 * the main thread refuses anyway (state this thread cannot see, such as a list's length) fails
 * the run with the same message an uncaught exception would have; a write to a list index,
 * the one a script could expect to be refused, therefore still waits for its answer.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { VariableError, parseVariablePath } from '../../gateway/context.ts';
import { ScriptSandbox, engineBroken } from './sandbox.ts';
import type { SandboxLimits, ScriptFailure, ScriptHost } from './sandbox.ts';

/** A run request from the pool. */
export interface RunMessage {
  type: 'run';
  id: number;
  source: string;
  filename: string;
  limits: SandboxLimits;
}

/** The pool forgets a script (its step was collected). */
export interface DropMessage {
  type: 'drop';
  id: number;
}

/** What the worker posts to the pool. */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'op'; op: string; a: string | undefined; b: string | undefined; wait: boolean }
  | { type: 'done'; failure: ScriptFailure | undefined; broken: string | undefined };

/** The main thread's answer to one op. */
export interface OpReply {
  value?: string;
  error?: string;
}

const { flag, port, rpcWaitMs } = workerData as {
  flag: SharedArrayBuffer;
  port: MessagePort;
  rpcWaitMs: number;
};
const signal = new Int32Array(flag);
const parent = parentPort!;
// Compiled engines by script id, least recently used first; each holds a QuickJS runtime.
const engines = new Map<number, ScriptSandbox>();
const maxEngines = 64;

// Writes in flight are bounded, so a script writing in a loop cannot queue unbounded memory
// on the main thread: past either bound the next write waits for its answer, which drains them.
const maxUnansweredWrites = 64;
const maxUnansweredBytes = 1024 * 1024;
let unansweredWrites = 0;
let unansweredBytes = 0;

// How the context parses a written name: `add` reads the variable first.
const writtenNames: Readonly<Record<string, 'read' | 'written' | 'cleared'>> = {
  set: 'written',
  add: 'read',
  clear: 'cleared',
};
const unnamedWrites: ReadonlySet<string> = new Set(['log', 'reject', 'error']);
const listIndex = /^\d+$/;

/**
 * Whether `op` can go without waiting; throws, as the context would, for a name it refuses
 * whatever the request holds (too long, or a segment reaching a prototype).
 */
function fireAndForget(op: string, name: string | undefined): boolean {
  if (unnamedWrites.has(op)) return true;
  const action = writtenNames[op];
  if (action === undefined) return false;
  let segments: readonly string[];
  try {
    const path = parseVariablePath(name ?? '', action);
    if (path.prototypeKey !== undefined) {
      const verb = action === 'cleared' ? 'cleared' : 'written';
      throw new VariableError(name ?? '', verb, `the segment "${path.prototypeKey}" would reach a prototype`);
    }
    segments = path.segments;
  } catch (error) {
    // The same plain Error the main thread's answer would have raised in the script.
    throw new Error((error as Error).message);
  }
  return !segments.some((segment) => listIndex.test(segment));
}

const host: ScriptHost = {
  call(op, a, b) {
    if (fireAndForget(op, a)) {
      unansweredWrites++;
      unansweredBytes += (a?.length ?? 0) + (b?.length ?? 0);
      if (unansweredWrites < maxUnansweredWrites && unansweredBytes < maxUnansweredBytes) {
        parent.postMessage({ type: 'op', op, a, b, wait: false } satisfies WorkerReply);
        return undefined;
      }
    }
    unansweredWrites = 0;
    unansweredBytes = 0;
    Atomics.store(signal, 0, 0);
    parent.postMessage({ type: 'op', op, a, b, wait: true } satisfies WorkerReply);
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
    engine = new ScriptSandbox(message.source, message.limits, message.filename);
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
  unansweredWrites = 0;
  unansweredBytes = 0;
  try {
    return engineFor(message).run(host);
  } catch (error) {
    return { kind: 'exception', message: (error as Error).message };
  }
}

parent.on('message', (message: RunMessage | DropMessage) => {
  if (message.type === 'drop') {
    drop(message.id);
    return;
  }
  const failure = run(message);
  parent.postMessage({ type: 'done', failure, broken: engineBroken() } satisfies WorkerReply);
});
parent.postMessage({ type: 'ready' } satisfies WorkerReply);
