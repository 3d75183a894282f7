/**
 * A script worker thread (pool.ts starts it): holds one QuickJS module, compiles each script
 * once (by id) and runs it on request. The script API is a synchronous RPC to the main thread,
 * which runs every operation against the real FlowContext: the op is posted to the parent, the
 * thread blocks on a shared flag with `Atomics.wait`, then takes the reply from its own port
 * with `receiveMessageOnPort`.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
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
  | { type: 'op'; op: string; a: string | undefined; b: string | undefined }
  | { type: 'done'; failure: ScriptFailure | undefined; broken: string | undefined };

/** The main thread's answer to one op. */
export interface OpReply {
  value?: string;
  error?: string;
}

const { flag, port, rpcWaitMs } = workerData as { flag: SharedArrayBuffer; port: MessagePort; rpcWaitMs: number };
const signal = new Int32Array(flag);
const parent = parentPort!;
// Compiled engines by script id, least recently used first; each holds a QuickJS runtime.
const engines = new Map<number, ScriptSandbox>();
const maxEngines = 64;

const host: ScriptHost = {
  call(op, a, b) {
    Atomics.store(signal, 0, 0);
    parent.postMessage({ type: 'op', op, a, b } satisfies WorkerReply);
    if (Atomics.wait(signal, 0, 0, rpcWaitMs) === 'timed-out') throw new Error(`the gateway did not answer ${op} in time`);
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
