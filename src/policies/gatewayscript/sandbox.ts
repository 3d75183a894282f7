/**
 * The GatewayScript engine: QuickJS compiled to WebAssembly (quickjs-emscripten), one runtime
 * and context per compiled policy. The script is compiled once into a function; each request
 * calls it with the frozen API objects (see prelude.ts), under a deadline (interrupt handler) and a
 * memory limit. After a limit is hit, or a script leaves state it could not clean, the engine
 * is disposed and rebuilt before the next run, so one request can never degrade the next.
 *
 * Some failures leave the whole WebAssembly module unusable: a host stack overflow unwinding
 * through WebAssembly frames (the module's own stack pointer is not restored), or QuickJS
 * aborting on `JS_FreeRuntime` after a stack overflow inside `JSON.parse`/`JSON.stringify`
 * leaked objects (`list_empty(&rt->gc_obj_list)`). This module then reports
 * {@link engineBroken}; the worker that loaded it (pool.ts) is retired and its memory dropped
 * whole, since nothing inside the module can be trusted or freed any more.
 *
 * Chosen over isolated-vm on measurements (docs/policies.md, "GatewayScript engine"): ~30 µs
 * per call here, no native build, and it runs on every Node major.
 */
import { RELEASE_SYNC, newQuickJSWASMModule, newVariant } from 'quickjs-emscripten';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { workerData } from 'node:worker_threads';
import { engineCeilingBytes } from './engine-limits.ts';
import { lineOf, preludeSource, wrapUserSource } from './prelude.ts';

const pageBytes = 64 * 1024;

// Each worker thread loads its own module, so the ceiling applies per worker (pool.ts).
const ceiling = (workerData as { engineBytes?: number } | null)?.engineBytes ?? engineCeilingBytes();
const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: Math.floor(ceiling / pageBytes) });
const quickjs = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory }));

let broken: string | undefined;

/** Why this thread's QuickJS module can no longer be used, or undefined while it is sound. */
export function engineBroken(): string | undefined {
  return broken;
}

/**
 * Bytes of the shared WebAssembly heap, so the interrupt handler can also stop one run once the
 * heap has grown by more than its own memory limit (before the process-wide ceiling is reached).
 */
function wasmHeapBytes(): number {
  return wasmMemory.buffer.byteLength;
}

/** What a script may do to the request; implemented over the FlowContext by the policy. */
export interface ScriptHost {
  /** `op` is get | set | add | clear | reject | error | log; values are JSON text. */
  call(op: string, a: string | undefined, b: string | undefined): string | undefined;
}

export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
}

/** Why a run failed. */
export type ScriptFailure =
  { kind: 'timeout'; message: string } | { kind: 'memory'; message: string } | { kind: 'exception'; message: string };

/** A script compiled for repeated runs. */
export class ScriptSandbox {
  private runtime!: QuickJSRuntime;
  private vm!: QuickJSContext;
  private runner!: QuickJSHandle;
  private cleaner!: QuickJSHandle;
  private raiser!: QuickJSHandle;
  private user!: QuickJSHandle;
  private host: ScriptHost | undefined;
  private deadline = 0;
  private heapCeiling = Infinity;
  private timedOut = false;
  private outOfMemory = false;
  private tainted = false;
  private disposed = false;

  /** Compiles `source`; throws a SyntaxError naming the line when it does not parse. */
  constructor(
    private readonly source: string,
    private readonly limits: SandboxLimits,
    private readonly filename: string,
  ) {
    this.build();
  }

  private build(): void {
    this.runtime = quickjs.newRuntime();
    this.runtime.setMemoryLimit(this.limits.memoryBytes);
    // Measured: 256 KiB allows ~1,500 nested calls; the worker thread's host stack (pool.ts)
    // is large enough that QuickJS reports its own overflow first.
    this.runtime.setMaxStackSize(256 * 1024);
    this.runtime.setInterruptHandler(() => {
      if (this.deadline === 0) return false;
      if (Date.now() > this.deadline) this.timedOut = true;
      else if (wasmHeapBytes() > this.heapCeiling) this.outOfMemory = true;
      return this.timedOut || this.outOfMemory;
    });
    this.vm = this.runtime.newContext();
    const vm = this.vm;
    const hostFn = vm.newFunction('host', (opHandle, aHandle, bHandle) => {
      const op = vm.getString(opHandle);
      if (op === 'mem') {
        if (this.deadline === 0 || wasmHeapBytes() <= this.heapCeiling) return vm.undefined;
        this.outOfMemory = true;
        return vm.newString('over');
      }
      const host = this.host;
      if (host === undefined) throw new Error('the script API is only available while the script runs');
      const a = aHandle === undefined || vm.typeof(aHandle) === 'undefined' ? undefined : vm.getString(aHandle);
      const b = bHandle === undefined || vm.typeof(bHandle) === 'undefined' ? undefined : vm.getString(bHandle);
      let result: string | undefined;
      try {
        result = host.call(op, a, b);
      } catch (error) {
        throw this.scriptError(error as Error);
      }
      return result === undefined ? vm.undefined : vm.newString(result);
    });
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
  }

  /**
   * The host's error as an Error made inside the realm. quickjs-emscripten would assign `name`
   * and `message` onto a bare error, which the frozen Error.prototype (prelude.ts) silently
   * refuses: the script saw a refused write as an Error with an empty message.
   */
  private scriptError(error: Error): QuickJSHandle | Error {
    const message = this.vm.newString(error.message);
    const made = this.vm.callFunction(this.raiser, this.vm.undefined, message);
    message.dispose();
    if (!made.error) return made.value;
    made.error.dispose();
    return error;
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
   * throws: every exit path leaves either a fresh engine for the next run or, when the module
   * itself failed, {@link engineBroken} set.
   */
  run(host: ScriptHost): ScriptFailure | undefined {
    let failure: ScriptFailure | undefined;
    try {
      if (this.disposed) this.rebuild();
      this.host = host;
      this.timedOut = false;
      this.outOfMemory = false;
      this.heapCeiling = wasmHeapBytes() + this.limits.memoryBytes;
      this.deadline = Date.now() + this.limits.timeoutMs;
      failure = this.call(this.runner) ?? this.drainJobs();
      if (failure === undefined && this.clean() !== 'ok') this.tainted = true;
    } catch (error) {
      // A host exception through WebAssembly frames (host stack exhausted, engine abort).
      broken ??= `the script engine failed: ${(error as Error).message}`;
      failure = { kind: 'memory', message: broken };
    } finally {
      this.host = undefined;
      this.deadline = 0;
    }
    if (failure !== undefined && failure.kind !== 'exception') this.tainted = true;
    if (failure?.kind === 'exception' && this.clean() !== 'ok') this.tainted = true;
    if (this.tainted) this.rebuild();
    return failure;
  }

  private call(fn: QuickJSHandle): ScriptFailure | undefined {
    const result = this.vm.callFunction(fn, this.vm.undefined, this.user);
    if (result.error) {
      const failure = this.describe(this.vm.dump(result.error));
      result.error.dispose();
      return failure;
    }
    result.value.dispose();
    return this.limitHit();
  }

  /** The host-driven clean-up: 'ok', or anything else (it failed, or globals stayed). */
  private clean(): string {
    if (this.disposed || broken !== undefined) return 'tainted';
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
      broken ??= `the script engine failed: ${(error as Error).message}`;
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
      if (Date.now() > this.deadline) this.timedOut = true;
      else if (wasmHeapBytes() > this.heapCeiling) this.outOfMemory = true;
      const hit = this.limitHit();
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  private limitHit(): ScriptFailure | undefined {
    return this.timedOut || this.outOfMemory ? this.describe({}) : undefined;
  }

  private describe(error: unknown): ScriptFailure {
    const { name, message } = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as {
      name?: string;
      message?: string;
    };
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
    if (broken !== undefined) return;
    this.disposed = false;
    this.tainted = false;
    try {
      this.build();
    } catch (error) {
      broken ??= `the script engine could not be rebuilt: ${(error as Error).message}`;
      this.disposed = true;
    }
  }

  /** Frees the QuickJS runtime; a later run rebuilds it. A runtime that cannot be freed breaks the module. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    try {
      for (const handle of [this.user, this.runner, this.cleaner, this.raiser]) if (handle?.alive) handle.dispose();
      if (this.vm?.alive) this.vm.dispose();
      if (this.runtime?.alive) this.runtime.dispose();
    } catch (error) {
      broken ??= `a script engine could not be freed: ${(error as Error).message}`;
    }
  }
}
