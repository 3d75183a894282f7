/**
 * The GatewayScript engine: QuickJS compiled to WebAssembly (quickjs-emscripten), one runtime
 * and context per compiled policy. The script is compiled once into a function; each request
 * calls it with the frozen API objects (see prelude.ts), under a deadline (interrupt handler) and a
 * memory limit. After a limit is hit, or a script leaves state it could not clean, the engine
 * is disposed and rebuilt before the next run, so one request can never degrade the next.
 *
 * A sandbox runs on the QuickJS module it is given (engine-module.ts): a script worker's, or the
 * gateway thread's inline tier's (inline.ts). Some failures leave that whole module unusable: a
 * host stack overflow unwinding through WebAssembly frames (the module's own stack pointer is not
 * restored), or QuickJS aborting on `JS_FreeRuntime` after a stack overflow inside
 * `JSON.parse`/`JSON.stringify` leaked objects (`list_empty(&rt->gc_obj_list)`). The module is
 * then marked broken and its owner drops it whole.
 *
 * Chosen over isolated-vm on measurements (docs/policies.md, "GatewayScript engine"): ~30 µs
 * per call here, no native build, and it runs on every Node major.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import type { EngineModule } from './engine-module.ts';
import { directCaller, installHostBridge } from './host-bridge.ts';
import type { DirectCall } from './host-bridge.ts';
import { lineOf, preludeSource, randomNumbers, wrapUserSource } from './prelude.ts';

/** What a script may do to the request; implemented over the FlowContext by the policy. */
export interface ScriptHost {
  /** `op` is get | set | add | clear | reject | error | log; values are JSON text. */
  call(op: string, a: string | undefined, b: string | undefined): string | undefined;
}

export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
}

/** How a sandbox runs, beyond the script's own limits. */
export interface SandboxOptions {
  /** QuickJS stack limit; default 256 KiB, for a worker thread's large native stack (pool.ts). */
  stackBytes?: number;
  /** WebAssembly heap growth that stops one run as out of memory; default the script's memory limit. */
  heapBudgetBytes?: number;
  /**
   * The gateway thread's tier (inline.ts): a run may have a slice and be stopped by its host; a
   * run that ends so is cleaned as after an exception rather than rebuilt; a rebuild waits for the
   * next run; a native stack overflow inside a host call stops the run even if the script catches it.
   */
  inline?: boolean;
}

/** Why a run failed; `slice` and `stopped` only happen in an inline sandbox, `writes` in a worker (write-budget.ts). */
export type ScriptFailure =
  | { kind: 'timeout'; message: string }
  | { kind: 'memory'; message: string }
  | { kind: 'exception'; message: string }
  | { kind: 'slice'; message: string }
  | { kind: 'stopped'; message: string }
  | { kind: 'writes'; message: string };

/** A script compiled for repeated runs. */
export class ScriptSandbox {
  private runtime!: QuickJSRuntime;
  private vm!: QuickJSContext;
  private runner!: QuickJSHandle;
  private cleaner!: QuickJSHandle;
  private raiser!: QuickJSHandle;
  private user!: QuickJSHandle;
  /** `runner(user)` through the FFI, once per run. */
  private direct!: DirectCall;
  private host: ScriptHost | undefined;
  private deadline = 0;
  private heapCeiling = Infinity;
  private sliceEnd = 0;
  private timedOut = false;
  private outOfMemory = false;
  private sliced = false;
  private stopped = false;
  private hostStack = false;
  private tainted = false;
  /** The last run's own cleanup found the realm clean (prelude.ts, `run`). */
  private cleanedInRun = false;
  private disposed = false;

  /** Compiles `source`; throws a SyntaxError naming the line when it does not parse. */
  constructor(
    private readonly source: string,
    private readonly limits: SandboxLimits,
    private readonly filename: string,
    private readonly engine: EngineModule,
    private readonly options: SandboxOptions = {},
  ) {
    this.build();
  }

  private build(): void {
    this.runtime = this.engine.quickjs.newRuntime();
    this.runtime.setMemoryLimit(this.limits.memoryBytes);
    // Measured: 256 KiB allows ~1,500 nested calls; the worker thread's host stack (pool.ts)
    // is large enough that QuickJS reports its own overflow first.
    this.runtime.setMaxStackSize(this.options.stackBytes ?? 256 * 1024);
    this.runtime.setInterruptHandler(() => {
      if (this.deadline === 0) return false;
      this.checkLimits();
      return this.limitReached();
    });
    this.vm = this.runtime.newContext();
    const vm = this.vm;
    const hostFn = installHostBridge(
      vm,
      'host',
      (op, a, b) => this.hostCall(op, a, b),
      (error) => this.raise(error),
    );
    const factory = this.unwrap(vm.evalCode(preludeSource, 'portico:prelude.js'));
    const api = this.unwrap(vm.callFunction(factory, vm.undefined, hostFn));
    factory.dispose();
    hostFn.dispose();
    this.runner = vm.getProp(api, 'run');
    this.cleaner = vm.getProp(api, 'cleanup');
    this.raiser = vm.getProp(api, 'raise');
    const seal = vm.getProp(api, 'seal');
    api.dispose();
    const compiled = vm.evalCode(wrapUserSource(this.source), this.filename);
    if (compiled.error) {
      const failure = vm.dump(compiled.error) as { name?: string; message?: string; stack?: string };
      compiled.error.dispose();
      seal.dispose();
      this.dispose();
      throw new SyntaxError(
        `${failure.name ?? 'SyntaxError'}: ${failure.message ?? 'invalid script'}${lineOf(failure.stack)}`,
      );
    }
    this.user = compiled.value;
    this.unwrap(vm.callFunction(seal, vm.undefined, this.user)).dispose();
    seal.dispose();
    this.direct = directCaller(vm, this.user);
  }

  /** Sets the flag of the first limit the current run is past, if any. */
  private checkLimits(): void {
    if (this.sliceEnd !== 0 && performance.now() > this.sliceEnd) this.sliced = true;
    else if (Date.now() > this.deadline) this.timedOut = true;
    else if (this.engine.heapBytes() > this.heapCeiling) this.outOfMemory = true;
  }

  private limitReached(): boolean {
    return this.timedOut || this.outOfMemory || this.sliced || this.stopped || this.hostStack;
  }

  /** Stops the current run at QuickJS's next interrupt check (inline.ts: the run goes to the pool). */
  stop(): void {
    if (this.deadline !== 0) this.stopped = true;
  }

  private hostCall(op: string, a: string | undefined, b: string | undefined): string | undefined {
    if (op === 'random') return randomNumbers();
    if (op === 'mem') {
      if (this.deadline === 0 || this.engine.heapBytes() <= this.heapCeiling) return undefined;
      this.outOfMemory = true;
      return 'over';
    }
    const host = this.host;
    if (host === undefined) throw new Error('the script API is only available while the script runs');
    return host.call(op, a, b);
  }

  /**
   * What a host call threw, as an Error made inside the realm. quickjs-emscripten would assign
   * `name` and `message` onto a bare error, which the frozen Error.prototype (prelude.ts) silently
   * refuses: the script saw a refused write as an Error with an empty message.
   */
  private raise(error: unknown): QuickJSHandle {
    // The gateway thread's native stack ran out inside a host call: QuickJS would let the script
    // catch it, and a worker's larger stack would not have run out.
    if (this.options.inline && error instanceof RangeError) this.hostStack = true;
    const message = this.vm.newString(error instanceof Error ? error.message : String(error));
    const made = this.vm.callFunction(this.raiser, this.vm.undefined, message);
    message.dispose();
    if (!made.error) return made.value;
    made.error.dispose();
    return this.vm.newError(error instanceof Error ? error.message : String(error));
  }

  private unwrap(result: ReturnType<QuickJSContext['evalCode']>): QuickJSHandle {
    if (result.error) {
      const failure = this.vm.dump(result.error);
      result.error.dispose();
      throw new Error(`GatewayScript prelude failed: ${JSON.stringify(failure)}`);
    }
    return result.value;
  }

  /**
   * Runs the script once against `host`; returns a failure, or undefined on success. Never
   * throws: every exit path leaves either a fresh engine for the next run (an inline sandbox:
   * one rebuilt at the next run) or, when the module itself failed, the module marked broken.
   * `sliceMs` (inline only) stops the run as `slice` once that much wall time has passed.
   */
  run(host: ScriptHost, sliceMs = 0): ScriptFailure | undefined {
    let failure: ScriptFailure | undefined;
    try {
      if (this.disposed) this.rebuild();
      this.host = host;
      this.timedOut = this.outOfMemory = this.sliced = this.stopped = this.hostStack = false;
      this.heapCeiling = this.engine.heapBytes() + (this.options.heapBudgetBytes ?? this.limits.memoryBytes);
      this.deadline = Date.now() + this.limits.timeoutMs;
      this.sliceEnd = sliceMs > 0 ? performance.now() + sliceMs : 0;
      failure = this.call(this.runner);
      // The runner cleaned up as its last step; that holds only if no promise job runs after it.
      const cleanAlready = failure === undefined && this.cleanedInRun && !this.runtime.hasPendingJob();
      failure ??= this.drainJobs();
      this.sliceEnd = 0;
      if (failure === undefined && !cleanAlready && this.clean() !== 'ok') this.tainted = true;
    } catch (error) {
      // A host exception through WebAssembly frames (host stack exhausted, engine abort).
      this.engine.fail(`the script engine failed: ${(error as Error).message}`);
      failure = { kind: 'memory', message: this.engine.broken! };
    } finally {
      this.host = undefined;
      this.deadline = this.sliceEnd = 0;
    }
    // A run the inline tier cut short is as clean as one that threw, once its flags are cleared.
    const interrupted = this.options.inline === true && (failure?.kind === 'slice' || failure?.kind === 'stopped');
    if (failure !== undefined && failure.kind !== 'exception' && !interrupted) this.tainted = true;
    this.sliced = this.stopped = false;
    if ((failure?.kind === 'exception' || interrupted) && this.clean() !== 'ok') this.tainted = true;
    if (this.tainted && this.options.inline) this.dispose();
    else if (this.tainted) this.rebuild();
    return failure;
  }

  private call(fn: QuickJSHandle): ScriptFailure | undefined {
    this.cleanedInRun = false;
    const result = this.direct.call(fn);
    if (result.error) {
      const failure = this.describe(this.vm.dump(result.error));
      result.error.dispose();
      return failure;
    }
    this.cleanedInRun = result.value === 1;
    return this.limitHit();
  }

  /** The host-driven clean-up: 'ok', or anything else (it failed, or globals stayed). */
  private clean(): string {
    if (this.disposed || this.engine.broken !== undefined) return 'tainted';
    try {
      this.deadline = Date.now() + this.limits.timeoutMs;
      const result = this.vm.callFunction(this.cleaner, this.vm.undefined);
      if (result.error) {
        result.error.dispose();
        return 'tainted';
      }
      const answer: unknown = this.vm.dump(result.value);
      result.value.dispose();
      return answer === 'ok' && !this.runtime.hasPendingJob() ? 'ok' : 'tainted';
    } catch (error) {
      this.engine.fail(`the script engine failed: ${(error as Error).message}`);
      return 'tainted';
    } finally {
      this.deadline = 0;
    }
  }

  /**
   * Promise callbacks a script queued run now, inside the same deadline and heap budget, so none
   * outlive the request. An interrupt inside an async function surfaces as a rejected promise,
   * not as a job error, so the limit flags are checked after every batch.
   */
  private drainJobs(): ScriptFailure | undefined {
    while (this.runtime.hasPendingJob()) {
      const jobs = this.runtime.executePendingJobs(64);
      if (jobs.error) {
        const failure = this.describe(this.vm.dump(jobs.error));
        jobs.error.dispose();
        if (failure.kind !== 'exception') return failure;
      }
      this.checkLimits();
      const hit = this.limitHit();
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  private limitHit(): ScriptFailure | undefined {
    return this.limitReached() ? this.describe({}) : undefined;
  }

  private describe(error: unknown): ScriptFailure {
    const { name, message } = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as {
      name?: string;
      message?: string;
    };
    if (this.stopped) return { kind: 'stopped', message: 'the run was stopped by its host' };
    if (this.sliced) return { kind: 'slice', message: 'the run used up its slice' };
    if (this.hostStack) return { kind: 'memory', message: "the gateway thread's native stack ran out" };
    if (this.timedOut)
      return {
        kind: 'timeout',
        message: `the script ran longer than its limit of ${this.limits.timeoutMs} ms`,
      };
    if (this.outOfMemory || (name === 'InternalError' && /out of memory/i.test(message ?? ''))) {
      return {
        kind: 'memory',
        message: `the script exceeded its memory limit of ${this.limits.memoryBytes} bytes`,
      };
    }
    if (
      /stack overflow/i.test(message ?? '') &&
      (name === 'RangeError' || name === 'InternalError' || name === 'SyntaxError')
    ) {
      return { kind: 'memory', message: 'the script exceeded its stack limit (maximum call stack size)' };
    }
    return { kind: 'exception', message: name === undefined ? String(message) : `${name}: ${message}` };
  }

  private rebuild(): void {
    this.dispose();
    if (this.engine.broken !== undefined) return;
    this.disposed = false;
    this.tainted = false;
    try {
      this.build();
    } catch (error) {
      this.engine.fail(`the script engine could not be rebuilt: ${(error as Error).message}`);
      this.disposed = true;
    }
  }

  /** Frees the QuickJS runtime; a later run rebuilds it. A runtime that cannot be freed breaks the module. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      this.direct?.dispose();
      for (const handle of [this.user, this.runner, this.cleaner, this.raiser]) if (handle?.alive) handle.dispose();
      if (this.vm?.alive) this.vm.dispose();
      if (this.runtime?.alive) this.runtime.dispose();
    } catch (error) {
      this.engine.fail(`a script engine could not be freed: ${(error as Error).message}`);
    }
  }
}
