/**
 * One QuickJS WebAssembly module with its own memory, as an object: a script worker (worker.ts)
 * holds one, and the gateway thread's inline tier (inline.ts) holds another, so neither shares
 * the other's heap or its failure. Every ScriptSandbox runs on the module it was given.
 *
 * Some failures leave the whole module unusable (sandbox.ts): {@link EngineModule.broken} then
 * says why, and its owner drops the module whole, since nothing inside it can be trusted or
 * freed any more.
 */
import { RELEASE_SYNC, newQuickJSWASMModule, newVariant } from 'quickjs-emscripten';
import type { QuickJSWASMModule } from 'quickjs-emscripten';

const pageBytes = 64 * 1024;

export class EngineModule {
  /** Why this module can no longer be used, or undefined while it is sound. */
  broken: string | undefined;

  private constructor(
    readonly quickjs: QuickJSWASMModule,
    private readonly memory: WebAssembly.Memory,
  ) {}

  /** Loads a module whose WebAssembly memory can never grow past `ceilingBytes`. */
  static async load(ceilingBytes: number): Promise<EngineModule> {
    const memory = new WebAssembly.Memory({ initial: 256, maximum: Math.floor(ceilingBytes / pageBytes) });
    const quickjs = await newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory: memory }));
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
