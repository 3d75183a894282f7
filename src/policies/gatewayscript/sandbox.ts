/**
 * The GatewayScript engine: QuickJS compiled to WebAssembly (quickjs-emscripten), one runtime
 * and context per compiled policy. The script is compiled once into a function; each request
 * calls it with the frozen API objects (see prelude.ts), under a deadline (interrupt handler) and a
 * memory limit. After a limit is hit, or a script leaves state it could not clean, the engine
 * is disposed and rebuilt before the next run, so one request can never degrade the next.
 *
 * Chosen over isolated-vm on measurements (docs/policies.md, "GatewayScript engine"): ~30 µs
 * per call here, no native build, and it runs on every Node major.
 */
import { RELEASE_SYNC, newQuickJSWASMModule, newVariant } from 'quickjs-emscripten';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten';
import { preludeSource, wrapUserSource } from './prelude.ts';

const pageBytes = 64 * 1024;

/**
 * The ceiling of the whole script engine's WebAssembly memory in this process
 * (`PORTICO_SCRIPT_ENGINE_BYTES`, default 256 MiB). QuickJS's own malloc limit does not cover
 * array and typed-array storage in this build, so the hard bound is the WebAssembly memory's
 * `maximum`: an allocating loop gets "out of memory" inside the engine (measured: ~0.2 s, the
 * heap stops at the ceiling) instead of growing the process without bound.
 */
export function engineCeilingBytes(env: Record<string, string | undefined> = process.env): number {
  const raw = env.PORTICO_SCRIPT_ENGINE_BYTES;
  const bytes = raw === undefined || raw === '' ? 256 * 1024 * 1024 : Number(raw);
  if (!Number.isInteger(bytes) || bytes < 32 * 1024 * 1024 || bytes > 4 * 1024 * 1024 * 1024) {
    throw new Error(`PORTICO_SCRIPT_ENGINE_BYTES must be a whole number of bytes from 32 MiB to 4 GiB, got "${raw}"`);
  }
  return bytes;
}

const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: Math.floor(engineCeilingBytes() / pageBytes) });
const quickjs = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory }));

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
  | { kind: 'timeout'; message: string }
  | { kind: 'memory'; message: string }
  | { kind: 'exception'; message: string };

/** A script compiled for repeated runs. */
export class ScriptSandbox {
  private runtime!: QuickJSRuntime;
  private vm!: QuickJSContext;
  private runner!: QuickJSHandle;
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
    // Measured: 256 KiB allows ~1,500 nested calls and stays inside V8's own stack; 512 KiB
    // overflowed the host stack before QuickJS noticed.
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
      if (op === 'tainted') {
        this.tainted = true;
        return vm.undefined;
      }
      if (op === 'mem') {
        if (this.deadline === 0 || wasmHeapBytes() <= this.heapCeiling) return vm.undefined;
        this.outOfMemory = true;
        return vm.newString('over');
      }
      const host = this.host;
      if (host === undefined) throw new Error('the script API is only available while the script runs');
      const a = aHandle === undefined || vm.typeof(aHandle) === 'undefined' ? undefined : vm.getString(aHandle);
      const b = bHandle === undefined || vm.typeof(bHandle) === 'undefined' ? undefined : vm.getString(bHandle);
      const result = host.call(op, a, b);
      return result === undefined ? vm.undefined : vm.newString(result);
    });
    const factory = this.unwrap(vm.evalCode(preludeSource, 'portico:prelude.js'));
    const api = this.unwrap(vm.callFunction(factory, vm.undefined, hostFn));
    factory.dispose();
    hostFn.dispose();
    this.runner = vm.getProp(api, 'run');
    const seal = vm.getProp(api, 'seal');
    api.dispose();
    const compiled = vm.evalCode(wrapUserSource(this.source), this.filename);
    if (compiled.error) {
      const failure = vm.dump(compiled.error) as { name?: string; message?: string; stack?: string };
      compiled.error.dispose();
      seal.dispose();
      this.dispose();
      throw new SyntaxError(`${failure.name ?? 'SyntaxError'}: ${failure.message ?? 'invalid script'}${lineOf(failure.stack)}`);
    }
    this.user = compiled.value;
    this.unwrap(vm.callFunction(seal, vm.undefined, this.user)).dispose();
    seal.dispose();
  }

  private unwrap(result: ReturnType<QuickJSContext['evalCode']>): QuickJSHandle {
    if (result.error) {
      const failure = this.vm.dump(result.error);
      result.error.dispose();
      throw new Error(`GatewayScript prelude failed: ${JSON.stringify(failure)}`);
    }
    return result.value;
  }

  /** Runs the script once against `host`; returns a failure, or undefined on success. */
  run(host: ScriptHost): ScriptFailure | undefined {
    if (this.disposed) this.rebuild();
    this.host = host;
    this.timedOut = false;
    this.outOfMemory = false;
    this.heapCeiling = wasmHeapBytes() + this.limits.memoryBytes;
    this.deadline = Date.now() + this.limits.timeoutMs;
    let failure: ScriptFailure | undefined;
    try {
      const result = this.vm.callFunction(this.runner, this.vm.undefined, this.user);
      if (result.error) {
        failure = this.describe(this.vm.dump(result.error));
        result.error.dispose();
      } else {
        result.value.dispose();
        failure = this.drainJobs();
      }
    } catch (error) {
      // The engine itself failed (host stack exhausted): report it and start afresh.
      failure = { kind: 'memory', message: `the script engine failed: ${(error as Error).message}` };
    } finally {
      this.host = undefined;
      this.deadline = 0;
    }
    if (failure !== undefined && failure.kind !== 'exception') this.tainted = true;
    if (this.tainted) this.rebuild();
    return failure;
  }

  /** Promise callbacks a script queued run now, inside the same deadline, so none outlive the request. */
  private drainJobs(): ScriptFailure | undefined {
    while (this.runtime.hasPendingJob()) {
      const jobs = this.runtime.executePendingJobs(64);
      if (jobs.error) {
        const failure = this.describe(this.vm.dump(jobs.error));
        jobs.error.dispose();
        if (failure.kind !== 'exception') return failure;
      }
    }
    return undefined;
  }

  private describe(error: unknown): ScriptFailure {
    const { name, message } = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as { name?: string; message?: string };
    if (this.timedOut) return { kind: 'timeout', message: `the script ran longer than its limit of ${this.limits.timeoutMs} ms` };
    if (this.outOfMemory || (name === 'InternalError' && /out of memory/i.test(message ?? ''))) {
      return { kind: 'memory', message: `the script exceeded its memory limit of ${this.limits.memoryBytes} bytes` };
    }
    if (name === 'RangeError' && /stack overflow/i.test(message ?? '')) {
      return { kind: 'memory', message: 'the script exceeded its stack limit (maximum call stack size)' };
    }
    return { kind: 'exception', message: name === undefined ? String(message) : `${name}: ${message}` };
  }

  private rebuild(): void {
    this.dispose();
    this.disposed = false;
    this.tainted = false;
    this.build();
  }

  /** Frees the QuickJS runtime; a later run rebuilds it. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const handle of [this.user, this.runner]) if (handle?.alive) handle.dispose();
    if (this.vm?.alive) this.vm.dispose();
    if (this.runtime?.alive) this.runtime.dispose();
  }
}

function lineOf(stack: string | undefined): string {
  const match = /:(\d+)(?::(\d+))?\)?\s*$/m.exec(stack ?? '');
  return match === null ? '' : ` (line ${match[1]})`;
}
