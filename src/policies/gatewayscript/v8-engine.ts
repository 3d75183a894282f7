/**
 * GatewayScript on V8 itself (issue 18): each compiled script gets an isolate of its own through
 * isolated-vm (engine.ts says which build and when), with its own heap bounded by the script's
 * memory limit, and one context in which the prelude (prelude.ts) built the frozen API objects
 * and locked the realm, exactly as on QuickJS (sandbox.ts). A request's run is one synchronous
 * call into the isolate under a time limit; the script's API calls come back through one host
 * callback, strings in and out.
 *
 * Between runs nothing of a run survives: the realm is frozen, and the prelude checks before and
 * after each run that no global was added; V8 runs a run's promise jobs before the call returns,
 * so a job that dirties the realm is found by the next run's check, which then runs on a fresh
 * isolate. A run stopped by its time limit, by memory exhaustion (isolated-vm disposes the
 * isolate) or by its host leaves the isolate to be rebuilt, unless the realm proves clean.
 */
import type { IsolatedVm, IvmContext, IvmIsolate, IvmReference, Sandbox, ScriptEngine } from './engine.ts';
import { preludeSource, wrapUserSource } from './prelude.ts';
import type { SandboxLimits, SandboxOptions, ScriptFailure, ScriptHost } from './sandbox.ts';
import { describeFailure } from './sandbox.ts';

const mebibyte = 1024 * 1024;
// isolated-vm refuses a smaller heap.
const minimumHeapMb = 8;
const timedOut = 'Script execution timed out.';

export class V8Engine implements ScriptEngine {
  readonly kind = 'v8';
  broken: string | undefined;

  constructor(private readonly ivm: IsolatedVm) {}

  fail(reason: string): void {
    this.broken ??= reason;
  }

  sandbox(source: string, limits: SandboxLimits, filename: string, options: SandboxOptions = {}): Sandbox {
    return new V8Sandbox(this.ivm, this, source, limits, filename, options);
  }
}

interface Built {
  isolate: IvmIsolate;
  context: IvmContext;
  runner: IvmReference;
  cleaner: IvmReference;
}

class V8Sandbox implements Sandbox {
  private built: Built | undefined;
  private host: ScriptHost | undefined;
  private stopped = false;
  private hostStack = false;

  constructor(
    private readonly ivm: IsolatedVm,
    private readonly engine: V8Engine,
    private readonly source: string,
    private readonly limits: SandboxLimits,
    private readonly filename: string,
    private readonly options: SandboxOptions,
  ) {
    this.built = this.build();
  }

  private build(): Built {
    const memoryLimit = Math.max(minimumHeapMb, Math.ceil(this.limits.memoryBytes / mebibyte));
    const isolate = new this.ivm.Isolate({ memoryLimit });
    try {
      const context = isolate.createContextSync();
      let user: IvmReference;
      try {
        user = isolate.compileScriptSync(wrapUserSource(this.source), { filename: this.filename }).runSync(context, {
          reference: true,
        });
      } catch (error) {
        throw syntaxError(error);
      }
      context.global.setSync(
        'porticoHost',
        new this.ivm.Callback((op, a, b) =>
          this.hostCall(op as string, a as string | undefined, b as string | undefined),
        ),
      );
      const boot = isolate
        .compileScriptSync(
          `(function () { var host = porticoHost; delete globalThis.porticoHost; var api = (${preludeSource})(host, true);` +
            ` return function (user) { api.seal(user); return [function () { return api.runChecked(user); }, api.cleanup]; }; })()`,
          { filename: 'portico:prelude.js' },
        )
        .runSync(context, { reference: true });
      const pair = boot.applySync(undefined, [user.derefInto()], { result: { reference: true } }) as IvmReference;
      boot.release();
      user.release();
      const runner = pair.getSync(0, { reference: true });
      const cleaner = pair.getSync(1, { reference: true });
      pair.release();
      return { isolate, context, runner, cleaner };
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  private hostCall(op: string, a: string | undefined, b: string | undefined): string | undefined {
    const host = this.host;
    if (host === undefined) throw new Error('the script API is only available while the script runs');
    try {
      return host.call(op, a, b);
    } catch (error) {
      // The gateway thread's native stack ran out inside a host call: the script could catch it.
      if (this.options.inline && error instanceof RangeError) this.hostStack = true;
      throw error;
    }
  }

  stop(): void {
    if (this.host !== undefined) this.stopped = true;
  }

  run(host: ScriptHost, sliceMs = 0): ScriptFailure | undefined {
    let failure: ScriptFailure | undefined;
    let again = true;
    for (let attempt = 0; again; attempt++) {
      again = false;
      let built = this.built;
      try {
        built ??= this.built = this.build();
      } catch (error) {
        return { kind: 'memory', message: `the script engine could not be rebuilt: ${(error as Error).message}` };
      }
      this.host = host;
      this.stopped = this.hostStack = false;
      // isolated-vm counts whole milliseconds; a slice shorter than one gets one.
      const timeout = sliceMs > 0 ? Math.max(1, Math.ceil(sliceMs)) : this.limits.timeoutMs;
      let tainted = false;
      try {
        const answer = built.runner.applySync(undefined, [], { timeout });
        if (answer === 2) {
          // The last run's promise jobs left a global behind: this run starts on a fresh isolate
          // (one that is not clean from the start is a failure of the engine).
          this.dispose();
          if (attempt > 0) return { kind: 'memory', message: 'the script engine could not start clean' };
          again = true;
          continue;
        }
        if (typeof answer === 'string') {
          const thrown = JSON.parse(answer) as { name?: string; message?: string; clean: boolean };
          failure = this.describe(thrown);
          // After a memory failure the isolate's heap may still be full: a fresh one serves the next run.
          tainted = !thrown.clean || failure?.kind !== 'exception';
        } else {
          failure = this.describe(undefined);
          tainted = answer !== 1;
        }
      } catch (error) {
        const message = (error as Error).message;
        failure = this.describe({ message }, error, sliceMs > 0) ?? { kind: 'exception', message };
        tainted = true;
        // A run cut short by its host or its slice is clean if the realm says so (as in sandbox.ts).
        const interrupted = failure.kind === 'slice' || failure.kind === 'stopped';
        if (interrupted && !built.isolate.isDisposed) tainted = this.clean(built) !== 'ok';
      } finally {
        this.host = undefined;
        this.stopped = this.hostStack = false;
      }
      if (tainted) this.dispose();
    }
    return failure;
  }

  /** Maps how a run ended to a failure; `hostError` is what isolated-vm threw, if it did. */
  private describe(
    thrown: { name?: string; message?: string } | undefined,
    hostError?: unknown,
    sliced = false,
  ): ScriptFailure | undefined {
    if (this.stopped) return { kind: 'stopped', message: 'the run was stopped by its host' };
    if (this.hostStack) return { kind: 'memory', message: "the gateway thread's native stack ran out" };
    if (hostError !== undefined) {
      const message = (hostError as Error).message ?? '';
      if (message === timedOut && sliced) return { kind: 'slice', message: 'the run used up its slice' };
      if (message === timedOut) {
        return { kind: 'timeout', message: `the script ran longer than its limit of ${this.limits.timeoutMs} ms` };
      }
      if (/memory limit/i.test(message) || this.built?.isolate.isDisposed === true) {
        return { kind: 'memory', message: `the script exceeded its memory limit of ${this.limits.memoryBytes} bytes` };
      }
    }
    return thrown === undefined ? undefined : describeFailure(thrown.name, thrown.message, this.limits);
  }

  private clean(built: Built): string {
    try {
      return built.cleaner.applySync(undefined, [], { timeout: this.limits.timeoutMs }) === 'ok' ? 'ok' : 'tainted';
    } catch {
      return 'tainted';
    }
  }

  dispose(): void {
    const built = this.built;
    this.built = undefined;
    if (built === undefined) return;
    try {
      if (!built.isolate.isDisposed) built.isolate.dispose();
    } catch (error) {
      this.engine.fail(`a script isolate could not be freed: ${(error as Error).message}`);
    }
  }
}

/** isolated-vm's SyntaxError ("Unexpected token ';' [file.js:2:10]") as the engines' common form. */
function syntaxError(error: unknown): SyntaxError {
  const { name, message } = error as Error;
  const located = /\s*\[[^\]]*:(\d+):\d+\]\s*$/.exec(message ?? '');
  const text = located === null ? message : message.slice(0, located.index);
  return new SyntaxError(`${name ?? 'SyntaxError'}: ${text}${located === null ? '' : ` (line ${located[1]})`}`);
}
