/** Limits of the script engine that the main thread validates and the workers apply. */

/**
 * The ceiling of the whole script engine's WebAssembly memory in one script worker
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

/**
 * What one GatewayScript run's writes may carry to the gateway thread (`PORTICO_SCRIPT_WRITE_BYTES`,
 * default 16 MiB; write-budget.ts says how a write counts). The engine's own limits bound what a
 * script holds, not what it hands over to the request's context on the gateway's heap.
 */
export function scriptWriteBytes(env: Record<string, string | undefined> = process.env): number {
  const raw = env.PORTICO_SCRIPT_WRITE_BYTES;
  const bytes = raw === undefined || raw === '' ? 16 * 1024 * 1024 : Number(raw);
  if (!Number.isInteger(bytes) || bytes < 64 * 1024 || bytes > 1024 * 1024 * 1024) {
    throw new Error(`PORTICO_SCRIPT_WRITE_BYTES must be a whole number of bytes from 64 KiB to 1 GiB, got "${raw}"`);
  }
  return bytes;
}
