/**
 * The script writes that need no answer, queued and applied later in order: a script worker
 * (worker.ts) sends them with its next waiting op or its run's end; the gateway thread's inline
 * tier (inline.ts) applies them when its run completes. Both decide the same way which writes
 * can wait, and the gateway thread applies them with the same rule (pool.ts): the first one
 * refused fails the run with its message, and nothing after it is applied.
 */
import { VariableError, parseVariablePath } from '../../gateway/context.ts';
import type { ScriptHost } from './sandbox.ts';

/** A write queued without waiting, or `touch`: a read answered from the read-ahead that the context must see. */
export type QueuedOp = [op: string, a: string | undefined, b: string | undefined];

// How the context parses a written name: `add` reads the variable first.
const writtenNames: Readonly<Record<string, 'read' | 'written' | 'cleared'>> = {
  set: 'written',
  add: 'read',
  clear: 'cleared',
};
const unnamedWrites: ReadonlySet<string> = new Set(['log', 'reject', 'error']);
const listIndex = /^\d+$/;

/** Whether `op` writes a variable (set, add, clear): later reads of any name must see it. */
export function writesVariable(op: string): boolean {
  return writtenNames[op] !== undefined;
}

/**
 * Whether `op` can go without waiting; throws, as the context would, for a name it refuses
 * whatever the request holds (too long, or a segment reaching a prototype). A write to a list
 * index waits: only the gateway thread knows the list's length.
 */
export function fireAndForget(op: string, name: string | undefined): boolean {
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
    // The same plain Error the gateway thread's answer would have raised in the script.
    throw new Error((error as Error).message);
  }
  return !segments.some((segment) => listIndex.test(segment));
}

/**
 * Queued writes are bounded, so a script writing in a loop cannot hold unbounded memory: past
 * either bound the next write must wait for its answer (worker.ts), which sends and applies the queue.
 */
export class WriteQueue {
  static readonly maxOps = 64;
  static readonly maxBytes = 1024 * 1024;
  private ops: QueuedOp[] = [];
  private bytes = 0;

  /** Queues a write; false (and nothing queued) when the queue is full and this write must wait. */
  offer(op: string, a: string | undefined, b: string | undefined): boolean {
    const bytes = (a?.length ?? 0) + (b?.length ?? 0);
    if (this.ops.length + 1 >= WriteQueue.maxOps || this.bytes + bytes >= WriteQueue.maxBytes) return false;
    this.ops.push([op, a, b]);
    this.bytes += bytes;
    return true;
  }

  /** Queues a read's `touch` (read-ahead.ts); touches are not bounded writes. */
  touch(name: string | undefined): void {
    this.ops.push(['touch', name, undefined]);
  }

  /** The queued ops, handed over; the queue is empty after. */
  take(): QueuedOp[] {
    const ops = this.ops;
    this.ops = [];
    this.bytes = 0;
    return ops;
  }
}

/**
 * Applies `ops` in order through `host`. Once one is refused, the script would have stopped
 * there had it waited: the rest are not applied, and the refusal's message is returned.
 * `applied` counts the writes tried (touches are reads).
 */
export function applyQueued(host: ScriptHost, ops: readonly QueuedOp[]): { applied: number; error?: string } {
  let applied = 0;
  for (const [op, a, b] of ops) {
    if (op !== 'touch') applied++;
    try {
      host.call(op, a, b);
    } catch (error) {
      return { applied, error: (error as Error).message };
    }
  }
  return { applied };
}
