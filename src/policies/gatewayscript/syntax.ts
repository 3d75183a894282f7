/**
 * Publish-time syntax check of a GatewayScript source, on the main thread: the source is compiled
 * (not run) by QuickJS, so a policy that does not parse is refused at publish as before, while
 * the runs themselves happen in the worker pool (pool.ts).
 *
 * The checker has its own small WebAssembly module. Its QuickJS stack limit is low (32 KiB,
 * measured: hundreds of nesting levels, while 64 KiB let a 100,000-deep `[[[…` overflow the
 * host stack first), so a hostile source ends in QuickJS's own "stack overflow" SyntaxError.
 * Should the module fail anyway, it is dropped and a fresh one loaded in the background.
 */
import { RELEASE_SYNC, newQuickJSWASMModule, newVariant } from 'quickjs-emscripten';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { lineOf, wrapUserSource } from './prelude.ts';

const checkerStackBytes = 32 * 1024;
const pageBytes = 64 * 1024;

function loadChecker(): Promise<QuickJSWASMModule> {
  const wasmMemory = new WebAssembly.Memory({ initial: 256, maximum: (64 * 1024 * 1024) / pageBytes });
  return newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory }));
}

let checker: QuickJSWASMModule | undefined = await loadChecker();

function replaceChecker(): void {
  checker = undefined;
  loadChecker().then(
    (fresh) => (checker = fresh),
    () => undefined,
  );
}

/** Throws a SyntaxError naming the line when `source` (a policy's script body) does not parse. */
export function checkSyntax(source: string, filename: string): void {
  if (checker === undefined)
    throw new SyntaxError('the script syntax checker is restarting after a failure; publish again');
  let failure: { name?: string; message?: string; stack?: string } | undefined;
  try {
    const runtime = checker.newRuntime();
    runtime.setMaxStackSize(checkerStackBytes);
    const vm = runtime.newContext();
    const result = vm.evalCode(wrapUserSource(source), filename, { compileOnly: true });
    if (result.error) {
      failure = vm.dump(result.error) as typeof failure;
      result.error.dispose();
    } else {
      result.value.dispose();
    }
    vm.dispose();
    runtime.dispose();
  } catch (error) {
    replaceChecker();
    throw new SyntaxError(`the script could not be compiled: ${(error as Error).message}`);
  }
  if (failure !== undefined) {
    throw new SyntaxError(
      `${failure.name ?? 'SyntaxError'}: ${failure.message ?? 'invalid script'}${lineOf(failure.stack)}`,
    );
  }
}
