/**
 * The inline tier of GatewayScript (issue 18): a fast script runs on the gateway thread, in its
 * own QuickJS module, and only a script that does not finish within a short slice goes to the
 * worker pool (pool.ts). Handing a run to a worker costs more than a short script itself
 * (postMessage, Atomics wake-ups, the worker's event loop, context switches); the pool stays the
 * only place a script may run long, so a spinning script never holds the gateway's event loop.
 *
 * An inline run is all or nothing: its reads are answered from the FlowContext without changing
 * it (read-ahead.ts), its writes are queued as a worker queues them (write-queue.ts), and only
 * when it completes is the queue applied, with the pool's rule. It is abandoned, with nothing
 * applied, and the run handed to the pool from scratch when it uses up its slice, reads after a
 * write, makes a write that would have to wait or would pass the run's write budget
 * (write-budget.ts: the pool's run fails it), reads a large value, runs out of QuickJS stack
 * (32 KiB here; the gateway thread's native stack is small) or memory, or its engine fails. So a
 * script's outcome is the pool's; an exception the script throws itself is final here too.
 *
 * A script abandoned inline is not tried inline again for a while (16 runs, doubling to 4 096,
 * reset by a success). One native call can ignore the slice (the interrupt handler is not
 * called inside it, e.g. sorting a million-element array); a run that overran the slice that
 * way waits 4 096 runs, and after a second overrun in a row the script never runs inline again.
 */
import { EngineModule } from './engine-module.ts';
import { scriptWriteBytes } from './engine-limits.ts';
import type { PooledScript } from './pool.ts';
import type { ReadAheadEntry } from './read-ahead.ts';
import { ScriptSandbox } from './sandbox.ts';
import type { ScriptFailure, ScriptHost } from './sandbox.ts';
import { WriteBudget } from './write-budget.ts';
import { WriteQueue, applyQueued, fireAndForget, writesVariable } from './write-queue.ts';

export interface InlineOptions {
  /** Wall time an inline run may take, in µs (`PORTICO_SCRIPT_INLINE_US`). */
  sliceUs: number;
  /** Where a module failure is reported. */
  logger?: { warn(fields: object, message: string): void };
  /** Ceiling of the inline module's WebAssembly memory; default 64 MiB. */
  engineBytes?: number;
  /** Bytes one run's writes may carry to the gateway; default `PORTICO_SCRIPT_WRITE_BYTES` (engine-limits.ts). */
  writeBytes?: number;
}

/** The request's side of an inline run: its ops, and reads that change nothing (read-ahead.ts). */
export interface InlineHost extends ScriptHost {
  read(name: string): ReadAheadEntry | undefined;
}

/** Why a run left the inline tier for the pool. */
export type AbortReason = 'slice' | 'read' | 'write' | 'stack' | 'memory' | 'engine' | 'compile';

/** What the tier did so far (tests, bench/gatewayscript-cost.ts). */
export interface InlineCounts {
  /** Runs completed inline (their outcome is final). */
  runs: number;
  /** Runs abandoned and handed to the pool, by reason. */
  aborts: Record<AbortReason, number>;
  /** Times a script was demoted (an abort, or an overrun). */
  demotions: number;
  /** Runs sent straight to the pool because their script was demoted. */
  demoted: number;
  /** Runs that overran their slice inside one native call. */
  overruns: number;
  /** Runs sent to the pool while the module was (re)loading. */
  unready: number;
  /** Modules dropped after a failure. */
  replaced: number;
}

interface ScriptState {
  module?: EngineModule;
  sandbox?: ScriptSandbox;
  /** Runs still to be sent to the pool, and the next back-off. */
  toPool: number;
  backoff: number;
  overruns: number;
  /** Whether the sandbox ran before: a first run also compiles the module's code paths it takes. */
  warm: boolean;
}

const stackBytes = 32 * 1024;
const heapBudgetBytes = 8 * 1024 * 1024;
const firstBackoff = 16;
const lastBackoff = 4096;
// JSON characters one run may read inline: QuickJS parses a value in one native call.
const maxReadChars = 64 * 1024;
const stopped = 'the inline run was stopped';

/** A finished inline run: its failure, if any, is final. */
export interface InlineResult {
  failure: ScriptFailure | undefined;
}

export class InlineTier {
  private module: EngineModule | undefined;
  private loading: Promise<void> | undefined;
  private readonly scripts = new Map<number, ScriptState>();
  private readonly sliceMs: number;
  private readonly writeBytes: number;
  private readonly counts: InlineCounts = {
    runs: 0,
    aborts: { slice: 0, read: 0, write: 0, stack: 0, memory: 0, engine: 0, compile: 0 },
    demotions: 0,
    demoted: 0,
    overruns: 0,
    unready: 0,
    replaced: 0,
  };

  constructor(private readonly options: InlineOptions) {
    this.sliceMs = options.sliceUs / 1000;
    this.writeBytes = options.writeBytes ?? scriptWriteBytes();
    this.load();
  }

  /** Resolves once a module is loaded (runs go to the pool until then). */
  async ready(): Promise<void> {
    while (this.module === undefined && this.loading !== undefined) await this.loading;
  }

  counters(): InlineCounts {
    return { ...this.counts, aborts: { ...this.counts.aborts } };
  }

  /** Forgets a compiled script (its step was collected). */
  drop(id: number): void {
    const state = this.scripts.get(id);
    if (state?.module === this.module) state?.sandbox?.dispose();
    this.scripts.delete(id);
  }

  /**
   * Runs `script` inline: its final result, or undefined when the run must go to the pool
   * (nothing of it was applied).
   */
  run(script: PooledScript, host: InlineHost): InlineResult | undefined {
    const module = this.module;
    if (module === undefined) {
      this.counts.unready++;
      return undefined;
    }
    let state = this.scripts.get(script.id);
    if (state === undefined) this.scripts.set(script.id, (state = { toPool: 0, backoff: 0, overruns: 0, warm: false }));
    if (state.toPool > 0) {
      state.toPool--;
      this.counts.demoted++;
      return undefined;
    }
    if (state.module !== module || state.sandbox === undefined) {
      try {
        state.sandbox = new ScriptSandbox(script.source, script.limits, script.filename, module, {
          stackBytes,
          heapBudgetBytes: Math.min(heapBudgetBytes, script.limits.memoryBytes),
          inline: true,
        });
        state.module = module;
        state.warm = false;
      } catch {
        state.sandbox = undefined;
        return this.abandon(state, module, 'compile');
      }
    }
    const run = new InlineRun(host, state.sandbox, new WriteBudget(this.writeBytes));
    const started = performance.now();
    const failure = state.sandbox.run(run, this.sliceMs);
    // Far past its slice: stuck in one native call (or the thread was descheduled). Such a
    // script waits long, and after two overruns in a row for good.
    const overran = state.warm && performance.now() - started > Math.max(50, 20 * this.sliceMs);
    state.warm = true;
    if (overran) {
      this.counts.overruns++;
      state.overruns++;
      state.backoff = lastBackoff;
    }
    const reason = run.reason ?? reasonOf(failure);
    if (reason !== undefined || module.broken !== undefined) return this.abandon(state, module, reason ?? 'engine');
    if (overran) this.demote(state);
    else state.backoff = state.overruns = 0;
    this.counts.runs++;
    const { error } = applyQueued(host, run.queue.take());
    return { failure: error === undefined ? failure : { kind: 'exception', message: `Error: ${error}` } };
  }

  private abandon(state: ScriptState, module: EngineModule, reason: AbortReason): undefined {
    if (module.broken !== undefined) {
      reason = 'engine';
      this.replace(module);
    }
    this.counts.aborts[reason]++;
    this.demote(state);
    return undefined;
  }

  /** The script's next runs go to the pool: 16 after its first demotion, twice as many each time after. */
  private demote(state: ScriptState): void {
    state.backoff = state.backoff === 0 ? firstBackoff : Math.min(state.backoff * 2, lastBackoff);
    state.toPool = state.overruns > 1 ? Infinity : state.backoff;
    this.counts.demotions++;
  }

  /** Drops a broken module and every engine on it; a fresh one loads in the background. */
  private replace(module: EngineModule): void {
    if (this.module !== module) return;
    this.module = undefined;
    this.counts.replaced++;
    for (const state of this.scripts.values()) {
      state.module = undefined;
      state.sandbox = undefined;
    }
    this.options.logger?.warn(
      { reason: module.broken },
      'the inline GatewayScript engine failed; scripts run in the worker pool until a fresh one is loaded',
    );
    this.load();
  }

  private load(): void {
    const loading = EngineModule.load(this.options.engineBytes ?? 64 * 1024 * 1024).then(
      (module) => {
        this.module = module;
      },
      (error: Error) => {
        this.options.logger?.warn({ error: error.message }, 'the inline GatewayScript engine could not be loaded');
      },
    );
    this.loading = loading.finally(() => {
      if (this.loading === loading) this.loading = undefined;
    });
  }
}

function reasonOf(failure: ScriptFailure | undefined): AbortReason | undefined {
  if (failure === undefined || failure.kind === 'exception') return undefined;
  if (failure.kind === 'slice' || failure.kind === 'timeout' || failure.kind === 'stopped') return 'slice';
  return /stack/.test(failure.message) ? 'stack' : 'memory';
}

/** The script API of one inline run: reads straight from the context until a write is queued. */
class InlineRun implements ScriptHost {
  readonly queue = new WriteQueue();
  reason: AbortReason | undefined;
  private wrote = false;
  private readChars = 0;

  constructor(
    private readonly host: InlineHost,
    private readonly sandbox: ScriptSandbox,
    private readonly budget: WriteBudget,
  ) {}

  call(op: string, a: string | undefined, b: string | undefined): string | undefined {
    if (this.reason !== undefined) throw new Error(stopped);
    if (op === 'get') {
      // A read after a write must see it: only the pool applies writes before a read.
      if (this.wrote) return this.stop('read');
      const entry = this.host.read(a ?? '');
      if (entry === undefined) return this.stop('read');
      const json = entry[1];
      this.readChars += json?.length ?? 0;
      if (this.readChars > maxReadChars) return this.stop('read');
      if (entry[2]) this.queue.touch(a);
      return json;
    }
    // Throws, as in a worker, for a name the context refuses whatever the request holds.
    const queueable = fireAndForget(op, a);
    if (!queueable || !this.budget.charge(op, a, b) || !this.queue.offer(op, a, b)) return this.stop('write');
    if (writesVariable(op)) this.wrote = true;
    return undefined;
  }

  private stop(reason: AbortReason): never {
    this.reason = reason;
    this.sandbox.stop();
    throw new Error(stopped);
  }
}
