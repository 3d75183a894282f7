/**
 * The call from a script into the gateway (`host(op, a, b)` in prelude.ts) without
 * quickjs-emscripten's generic function trampoline.
 *
 * quickjs-emscripten dispatches every call of a host function through a generator-based scope
 * (`Scope.withScopeMaybeAsync`), a `WeakLifetime` object per argument and per `this`, and handles
 * for the result; a short script's few host calls spent more in that machinery than in QuickJS
 * itself (issue 18: about half of a two-op run's CPU, with the garbage it made). Our one host
 * function takes up to three strings and returns a string or nothing, so this bridge reads the
 * arguments straight from QuickJS's argument vector and answers with one new string, through the
 * same FFI calls the library makes (`QTS_ArgvGetJSValueConstPointer`, `QTS_GetString`,
 * `QTS_NewString`, `QTS_Throw`), with the same ownership: the result is a new value the engine
 * takes over, an exception is thrown through `QTS_Throw` and its handle freed here.
 *
 * It replaces the dispatcher of one context (`cToHostCallbacks.callFunction`, an internal of
 * quickjs-emscripten-core 0.32.0, pinned in package.json). A call of any other host function of
 * that context still goes to the library's own dispatcher. If the internals are not there (a
 * different version), {@link installHostBridge} throws at engine build, so the gateway refuses
 * to start its scripts rather than run them differently (test/policies/gatewayscript-bridge.test.ts).
 *
 * The other direction, the host's call of the prelude's `run(user)` once per request, goes
 * through the FFI too ({@link directCaller}): the library's `callFunction` copies its arguments
 * into a fresh WebAssembly allocation through new typed-array views and wraps the result in
 * lifetime objects, which was a quarter of a short script's run (issue 18).
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';

/** The script's call, with its arguments as strings (undefined where the script passed undefined or nothing). */
export type HostFunction = (op: string, a: string | undefined, b: string | undefined) => string | undefined;

/** What a host function may throw: a handle to an error made inside the realm, or a host Error. */
export type RaiseError = (error: unknown) => QuickJSHandle;

type Pointer = number;

interface Ffi {
  QTS_ArgvGetJSValueConstPointer(argv: Pointer, index: number): Pointer;
  QTS_GetString(ctx: Pointer, value: Pointer): Pointer;
  QTS_FreeCString(ctx: Pointer, chars: Pointer): void;
  QTS_NewString(ctx: Pointer, chars: Pointer): Pointer;
  QTS_IsEqual(ctx: Pointer, a: Pointer, b: Pointer, op: number): number;
  QTS_GetUndefined(): Pointer;
  QTS_Throw(ctx: Pointer, error: Pointer): Pointer;
  QTS_Call(ctx: Pointer, fn: Pointer, thisValue: Pointer, argc: number, argv: Pointer): Pointer;
  QTS_ResolveException(ctx: Pointer, value: Pointer): Pointer;
  QTS_FreeValuePointer(ctx: Pointer, value: Pointer): void;
  QTS_GetFloat64(ctx: Pointer, value: Pointer): number;
}

interface EmscriptenHeap {
  UTF8ToString(pointer: Pointer): string;
  /** The WebAssembly memory, replaced by a new view when the heap grows. */
  HEAPU8: Uint8Array;
  _malloc(bytes: number): Pointer;
  _free(pointer: Pointer): void;
}

type Dispatch = (ctx: Pointer, thisPtr: Pointer, argc: number, argv: Pointer, fnId: number) => Pointer;

/** The parts of a QuickJSContext (quickjs-emscripten-core 0.32.0) the bridge uses. */
interface ContextInternals {
  ffi?: Ffi;
  module?: EmscriptenHeap;
  ctx?: { value: Pointer };
  runtime?: { hostRefs?: { get(id: number): unknown } };
  cToHostCallbacks?: { callFunction?: Dispatch };
  memory?: { heapValueHandle?(value: Pointer): QuickJSHandle };
}

const strictlyEqual = 0;

const utf8 = new TextEncoder();

/**
 * Makes `fn` callable from the realm as a function (returned) whose calls bypass the library's
 * trampoline. `raise` turns what `fn` throws into an error handle of the realm (freed here).
 */
export function installHostBridge(
  vm: QuickJSContext,
  name: string,
  fn: HostFunction,
  raise: RaiseError,
): QuickJSHandle {
  const internals = vm as unknown as ContextInternals;
  const { ffi, module, ctx, runtime, cToHostCallbacks } = internals;
  const generic = cToHostCallbacks?.callFunction;
  if (
    ffi === undefined ||
    module === undefined ||
    ctx === undefined ||
    typeof runtime?.hostRefs?.get !== 'function' ||
    cToHostCallbacks === undefined ||
    typeof generic !== 'function' ||
    typeof module.UTF8ToString !== 'function' ||
    !(module.HEAPU8 instanceof Uint8Array) ||
    typeof ffi.QTS_ArgvGetJSValueConstPointer !== 'function'
  )
    throw new Error('the GatewayScript host bridge does not fit this quickjs-emscripten version (0.32.0 expected)');
  // The library's own function, as the realm sees it: only its identity matters here (its
  // implementation is never called through the bridge).
  const marker: () => undefined = () => undefined;
  const handle = vm.newFunction(name, marker);
  const hostRefs = runtime.hostRefs!;
  const ctxPtr = ctx.value;
  const undefinedPtr = ffi.QTS_GetUndefined();

  const argument = (argc: number, argv: Pointer, index: number): string | undefined => {
    if (index >= argc) return undefined;
    const value = ffi.QTS_ArgvGetJSValueConstPointer(argv, index);
    if (ffi.QTS_IsEqual(ctxPtr, value, undefinedPtr, strictlyEqual) !== 0) return undefined;
    const chars = ffi.QTS_GetString(ctxPtr, value);
    try {
      return module.UTF8ToString(chars);
    } finally {
      ffi.QTS_FreeCString(ctxPtr, chars);
    }
  };

  // Emscripten's own `lengthBytesUTF8`/`stringToUTF8` walk the text in JavaScript, a code unit at
  // a time: for a JSON body of a kilobyte that was most of a host call's cost (issue 18). Node
  // counts and encodes natively; both write a lone surrogate as U+FFFD (emscripten took the next
  // unit as its pair), which JSON text and decoded bodies never hold.
  const newString = (text: string): Pointer => {
    // The engine reads the answer as a C string: a NUL would cut it short without a word. Answers
    // are JSON text (NUL escaped) or a body read ahead without one (read-ahead.ts); anything else
    // is refused, not truncated.
    if (text.includes('\0')) throw new Error('a value with a NUL character cannot cross into the script');
    const length = Buffer.byteLength(text, 'utf8');
    const chars = module._malloc(length + 1);
    // A full WebAssembly heap: never write through a null pointer (the script sees an Error).
    if (chars === 0) throw new Error('out of memory');
    try {
      // Read after the malloc: a heap that grew has a new buffer.
      const heap = module.HEAPU8;
      utf8.encodeInto(text, heap.subarray(chars, chars + length));
      heap[chars + length] = 0;
      return ffi.QTS_NewString(ctxPtr, chars);
    } finally {
      module._free(chars);
    }
  };

  cToHostCallbacks.callFunction = (callCtx, thisPtr, argc, argv, fnId) => {
    if (callCtx !== ctxPtr || hostRefs.get(fnId) !== marker) return generic(callCtx, thisPtr, argc, argv, fnId);
    try {
      const op = argument(argc, argv, 0) ?? '';
      const result = fn(op, argument(argc, argv, 1), argument(argc, argv, 2));
      return result === undefined ? 0 : newString(result);
    } catch (error) {
      const thrown = raise(error);
      try {
        return ffi.QTS_Throw(ctxPtr, thrown.value as Pointer);
      } finally {
        thrown.dispose();
      }
    }
  };
  return handle;
}

/** A call of one function of the realm with one fixed argument, straight through the FFI. */
export interface DirectCall {
  /** Calls `fn(argument)`: what it returned as a number (NaN if not one), or the error it threw (the caller disposes it). */
  call(fn: QuickJSHandle): { value: number; error?: undefined } | { error: QuickJSHandle };
  /** Frees the argument vector (the argument's own handle stays the caller's). */
  dispose(): void;
}

/**
 * Calls functions of `vm` with `argument` as their one argument, `this` undefined, through the
 * same FFI calls as the library's `callFunction` (`QTS_Call`, `QTS_ResolveException`), with the
 * argument vector allocated once. The result is read as a number and freed here; an exception
 * comes back as a handle, as the library gives it. `argument` must outlive this caller.
 */
export function directCaller(vm: QuickJSContext, argument: QuickJSHandle): DirectCall {
  const { ffi, module, ctx, memory } = vm as unknown as ContextInternals;
  if (
    ffi === undefined ||
    module === undefined ||
    ctx === undefined ||
    typeof ffi.QTS_Call !== 'function' ||
    typeof ffi.QTS_ResolveException !== 'function' ||
    typeof ffi.QTS_FreeValuePointer !== 'function' ||
    typeof ffi.QTS_GetFloat64 !== 'function' ||
    typeof memory?.heapValueHandle !== 'function' ||
    !(module.HEAPU8 instanceof Uint8Array)
  )
    throw new Error('the GatewayScript direct call does not fit this quickjs-emscripten version (0.32.0 expected)');
  const ctxPtr = ctx.value;
  const undefinedPtr = ffi.QTS_GetUndefined();
  // One JSValue pointer (wasm32), little-endian as WebAssembly memory is.
  const argv = module._malloc(4);
  if (argv === 0) throw new Error('out of memory');
  new DataView(module.HEAPU8.buffer).setInt32(argv, argument.value as Pointer, true);
  let freed = false;
  return {
    call(fn) {
      if (freed) throw new Error('the direct call was disposed');
      const result = ffi.QTS_Call(ctxPtr, fn.value as Pointer, undefinedPtr, 1, argv);
      const error = ffi.QTS_ResolveException(ctxPtr, result);
      if (error !== 0) {
        ffi.QTS_FreeValuePointer(ctxPtr, result);
        return { error: memory.heapValueHandle!(error) };
      }
      const value = ffi.QTS_GetFloat64(ctxPtr, result);
      ffi.QTS_FreeValuePointer(ctxPtr, result);
      return { value };
    },
    dispose() {
      if (freed) return;
      freed = true;
      module._free(argv);
    },
  };
}
