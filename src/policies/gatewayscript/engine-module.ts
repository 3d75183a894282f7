/**
 * One QuickJS WebAssembly module with its own memory, as an object: a script worker (worker.ts)
 * holds one, and the gateway thread's inline tier (inline.ts) holds another, so neither shares
 * the other's heap or its failure. Every ScriptSandbox runs on the module it was given.
 *
 * Some failures leave the whole module unusable (sandbox.ts): {@link EngineModule.broken} then
 * says why, and its owner drops the module whole, since nothing inside it can be trusted or
 * freed any more.
 */
import quickjsNgEntry from '@jitl/quickjs-ng-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import type { QuickJSSyncVariant, QuickJSWASMModule } from 'quickjs-emscripten-core';

// The package's types describe its CommonJS entry (the variant under `default`); Node's `import`
// condition loads its ES module, whose default export is the variant itself.
const quickjsNg = quickjsNgEntry as unknown as QuickJSSyncVariant;

const pageBytes = 64 * 1024;

/**
 * A QuickJS module (quickjs-ng, the release build) on WebAssembly memory that can never grow past
 * `ceilingBytes`. quickjs-ng rather than Bellard's QuickJS (issue 18): the demo's `get.stores` run,
 * mostly `JSON.parse` of a 572-byte body, takes 0.42× the time, measured side by side in one
 * process (bench/README.md, Session 15).
 */
export async function loadQuickJS(
  ceilingBytes: number,
): Promise<{ quickjs: QuickJSWASMModule; memory: WebAssembly.Memory }> {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: Math.floor(ceilingBytes / pageBytes) });
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(quickjsNg, { wasmMemory: memory }));
  return { quickjs, memory };
}

export class EngineModule {
  /** Why this module can no longer be used, or undefined while it is sound. */
  broken: string | undefined;

  private constructor(
    readonly quickjs: QuickJSWASMModule,
    private readonly memory: WebAssembly.Memory,
  ) {}

  /** Loads a module whose WebAssembly memory can never grow past `ceilingBytes`. */
  static async load(ceilingBytes: number): Promise<EngineModule> {
    const { quickjs, memory } = await loadQuickJS(ceilingBytes);
    return new EngineModule(quickjs, memory);
  }

  /**
   * Bytes of the module's WebAssembly heap, so the interrupt handler can also stop one run once
   * the heap has grown by more than its own budget (before the module's ceiling is reached).
   */
  heapBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Records the first reason the module broke. */
  fail(reason: string): void {
    this.broken ??= reason;
  }
}
