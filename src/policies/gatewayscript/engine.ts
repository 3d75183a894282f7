/**
 * Which engine runs GatewayScript (issue 18): V8 itself, in isolates of their own through
 * isolated-vm (v8-engine.ts), or QuickJS compiled to WebAssembly (engine-module.ts, sandbox.ts).
 * Both run the same prelude (prelude.ts) with the same frozen realm, limits and failure kinds,
 * so a script's outcome does not depend on the engine; V8 runs a short script several times
 * faster (docs/policies.md, "GatewayScript engine").
 *
 * isolated-vm is a native addon whose major version follows Node's (5.x for Node 20, 6.x for 22,
 * 7.x for 24). package.json lists one alias per Node major as an optional dependency; npm
 * installs (and builds) the one whose `engines` match and skips the others. V8 is used only when
 * node runs with `--no-node-snapshot` (isolated-vm's requirement since Node 20: isolates made
 * from a different snapshot than node's own can crash the process); otherwise, or when no
 * alias loads, `auto` means QuickJS.
 */
import { createRequire } from 'node:module';
import type { SandboxLimits, SandboxOptions, ScriptFailure, ScriptHost } from './sandbox.ts';

export type EngineKind = 'quickjs' | 'v8';

/** A compiled script, run once per request (sandbox.ts, v8-engine.ts). */
export interface Sandbox {
  /** Runs the script against `host`; a failure, or undefined on success. Never throws. */
  run(host: ScriptHost, sliceMs?: number): ScriptFailure | undefined;
  /** Stops the current run (inline.ts: it goes to the pool). */
  stop(): void;
  /** Frees the engine's resources; a later run rebuilds them. */
  dispose(): void;
}

/** One engine instance: a worker's, the inline tier's. */
export interface ScriptEngine {
  readonly kind: EngineKind;
  /** Why this engine can no longer be used, or undefined while it is sound. */
  broken: string | undefined;
  /** Records the first reason the engine broke. */
  fail(reason: string): void;
  /** Compiles `source`; throws a SyntaxError naming the line when it does not parse. */
  sandbox(source: string, limits: SandboxLimits, filename: string, options?: SandboxOptions): Sandbox;
}

/** The parts of isolated-vm's API that v8-engine.ts uses (the same in 5.x, 6.x and 7.x). */
export interface IsolatedVm {
  Isolate: new (options: { memoryLimit: number }) => IvmIsolate;
  Callback: new (fn: (...args: unknown[]) => unknown) => object;
}
export interface IvmIsolate {
  readonly isDisposed: boolean;
  createContextSync(): IvmContext;
  compileScriptSync(code: string, options: { filename: string }): IvmScript;
  dispose(): void;
}
export interface IvmContext {
  readonly global: { setSync(name: string, value: unknown): void };
  release(): void;
}
export interface IvmScript {
  runSync(context: IvmContext, options: { reference: true; timeout?: number }): IvmReference;
  release(): void;
}
export interface IvmReference {
  applySync(
    receiver: undefined,
    args: unknown[],
    options?: { timeout?: number; result?: { reference: true } },
  ): unknown;
  getSync(property: number, options: { reference: true }): IvmReference;
  derefInto(): unknown;
  release(): void;
}

const majors: [number, string][] = [
  [24, 'isolated-vm-node24'],
  [22, 'isolated-vm-node22'],
  [20, 'isolated-vm-node20'],
];

let loaded: { ivm?: IsolatedVm; reason?: string } | undefined;

/** True when node runs without its startup snapshot (`--no-node-snapshot`, in argv or NODE_OPTIONS). */
export function nodeSnapshotOff(execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS): boolean {
  return execArgv.includes('--no-node-snapshot') || (nodeOptions ?? '').split(/\s+/).includes('--no-node-snapshot');
}

/** isolated-vm for this Node major, or why it cannot be used. */
export function isolatedVm(): { ivm?: IsolatedVm; reason?: string } {
  if (loaded !== undefined) return loaded;
  const major = Number(process.versions.node.split('.')[0]);
  const name = majors.find(([from]) => major >= from)?.[1];
  if (name === undefined) return (loaded = { reason: `no isolated-vm build is listed for Node ${major}` });
  if (!nodeSnapshotOff())
    return (loaded = { reason: 'node runs with its startup snapshot (start it with --no-node-snapshot)' });
  try {
    return (loaded = { ivm: createRequire(import.meta.url)(name) as IsolatedVm });
  } catch (error) {
    return (loaded = { reason: `${name} could not be loaded: ${(error as Error).message.split('\n')[0]}` });
  }
}

/**
 * The engine a setting names (`PORTICO_SCRIPT_ENGINE`): `v8`, `quickjs`, or `auto` (the default:
 * V8 when it can be used, else QuickJS). `v8` that cannot be used throws, naming why.
 */
export function engineKind(setting: string | undefined = process.env.PORTICO_SCRIPT_ENGINE): EngineKind {
  const value = setting === undefined || setting === '' ? 'auto' : setting;
  if (value === 'quickjs') return 'quickjs';
  if (value !== 'auto' && value !== 'v8') {
    throw new Error(`PORTICO_SCRIPT_ENGINE must be auto, v8 or quickjs, got "${setting}"`);
  }
  const { ivm, reason } = isolatedVm();
  if (ivm !== undefined) return 'v8';
  if (value === 'v8') throw new Error(`PORTICO_SCRIPT_ENGINE is v8, but V8 isolates cannot be used: ${reason}`);
  return 'quickjs';
}

/** Loads an engine of `kind`; `ceilingBytes` bounds a QuickJS module's whole WebAssembly memory. */
export async function loadEngine(kind: EngineKind, ceilingBytes: number): Promise<ScriptEngine> {
  if (kind === 'v8') {
    const { ivm, reason } = isolatedVm();
    if (ivm === undefined) throw new Error(`V8 isolates cannot be used: ${reason}`);
    const { V8Engine } = await import('./v8-engine.ts');
    return new V8Engine(ivm);
  }
  const { EngineModule } = await import('./engine-module.ts');
  return EngineModule.load(ceilingBytes);
}
