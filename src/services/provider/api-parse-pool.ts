/**
 * Parses and validates an imported API document on a worker thread, so that a process serving
 * the gateway too (`portico serve --role all`) goes on answering its calls while a large
 * document is read: 40,000 paths take seconds of CPU, which on the main thread every gateway
 * call waited for. One worker for the process, started at the first large import, ended by
 * {@link closeApiParseWorker} (the platform's close); it takes one job at a time, the importing
 * orgs in turn, within a memory limit ({@link configureApiParseWorker}).
 *
 * A small document (under {@link mainThreadChars}) is read on the calling thread, with no
 * worker to start for it. The result and the errors are the same either way
 * (test/definitions/parse-worker.test.ts).
 */
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';
import { parseApiDocument } from '../../definitions/index.ts';
import type { ApiDefinition } from '../../definitions/types.ts';
import { DefinitionError, PorticoError } from '../../errors.ts';
import type { DefinitionProblem, ErrorCode, ErrorParams } from '../../errors.ts';
import { assemblyProblems } from '../../policies/check-assembly.ts';
import { fromBatches } from './value-batches.ts';

/**
 * Below this many characters a document is parsed where it is imported: 16 KiB of YAML take
 * 10–50 ms (JSON a few), about what sending it to the worker and back costs.
 */
export const mainThreadChars = 16 * 1024;

/** An error as it crosses from the worker: structured cloning keeps no class. */
export type WireError =
  | { kind: 'definition'; file: string; problems: DefinitionProblem[]; problemCount: number }
  | { kind: 'portico'; code: ErrorCode; params: ErrorParams; status: number; headers: Record<string, string> }
  | { kind: 'other'; message: string; stack: string | undefined };

export interface ParseJob {
  id: number;
  text: string;
  file: string;
}

/** The definition comes in batches (value-batches.ts), the main thread rebuilding it a slice at a time. */
export type ParseReply = { id: number; batches: Uint8Array[] } | { id: number; error: WireError };

interface Queued extends ParseJob {
  owner: string;
  resolve(definition: ApiDefinition): void;
  reject(error: unknown): void;
}

/** How much memory the worker may use (`PORTICO_IMPORT_MEMORY_MB`); a document needing more is refused. */
let memoryMb = 1024;
let worker: Worker | undefined;
/** The job the worker has now; the others wait on the main thread, in their owner's queue. */
let running: Queued | undefined;
/** Waiting jobs by owner (the importing org), each owner's in arrival order. */
const queues = new Map<string, Queued[]>();
/** Owners with waiting jobs, in the order they are served: the next job is the first owner's. */
const turns: string[] = [];
const inFlight = new Set<Promise<ApiDefinition>>();
let nextId = 1;

/** Sets the worker's memory limit for workers started from now on (the platform's start). */
export function configureApiParseWorker(options: { memoryMb: number }): void {
  memoryMb = options.memoryMb;
}

/**
 * {@link parseApiDocument} with the policies' assembly check, as an import runs it: a large
 * document in the worker ({@link parseInWorker}), a small one here.
 * @throws the `DEF_PARSE` / `DEF_INVALID` errors of parseApiDocument, with the same messages and problems.
 */
export async function parseImportedApi(text: string, file: string, owner = ''): Promise<ApiDefinition> {
  if (text.length < mainThreadChars) return parseApiDocument(text, file, assemblyProblems);
  return parseInWorker(text, file, owner);
}

/**
 * {@link parseApiDocument} with the policies' assembly check, in the worker, whatever the size.
 * The worker takes one job at a time, the owners in turn: an org that queues many large
 * imports delays another org's by at most one of its own, and a job that kills the worker
 * (past its memory limit) fails alone — the next job gets a new worker.
 */
export function parseInWorker(text: string, file: string, owner = ''): Promise<ApiDefinition> {
  const parsed = new Promise<ApiDefinition>((resolve, reject) => {
    const job: Queued = { id: nextId++, text, file, owner, resolve, reject };
    let queue = queues.get(owner);
    if (queue === undefined) queues.set(owner, (queue = []));
    queue.push(job);
    // An owner whose job runs now takes its next turn after the others waiting (see dispatchNext).
    if (!turns.includes(owner) && running?.owner !== owner) turns.push(owner);
    dispatchNext();
  });
  inFlight.add(parsed);
  const settled = () => inFlight.delete(parsed);
  parsed.then(settled, settled);
  return parsed;
}

/** Ends the worker once its jobs are answered; a later import starts another. */
export async function closeApiParseWorker(): Promise<void> {
  await Promise.allSettled([...inFlight]);
  const idle = worker;
  if (idle === undefined || running !== undefined) return;
  worker = undefined;
  await idle.terminate();
}

/** Posts the next owner's first job when the worker is free; `finished` goes behind the owners waiting. */
function dispatchNext(finished?: string): void {
  if (running !== undefined) return;
  if (finished !== undefined && queues.has(finished) && !turns.includes(finished)) turns.push(finished);
  const owner = turns.shift();
  if (owner === undefined) {
    // Held open while a job runs, not while idle: an idle worker never keeps the process alive.
    worker?.unref();
    return;
  }
  const queue = queues.get(owner)!;
  const job = queue.shift()!;
  if (queue.length === 0) queues.delete(owner);
  running = job;
  const parser = started();
  parser.ref();
  parser.postMessage({ id: job.id, text: job.text, file: job.file } satisfies ParseJob);
}

function started(): Worker {
  if (worker !== undefined) return worker;
  const parser = createWorker({ maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: 64 });
  parser.on('message', (reply: ParseReply) => {
    const job = running;
    if (job === undefined || job.id !== reply.id) return;
    running = undefined;
    if ('error' in reply) job.reject(errorFromWire(reply.error));
    else fromBatches(reply.batches).then((definition) => job.resolve(definition as ApiDefinition), job.reject);
    dispatchNext(job.owner);
  });
  parser.on('error', (error) => stopped(parser, error));
  parser.on('exit', (code) => stopped(parser, new Error(`the API document parser stopped (exit code ${code})`)));
  parser.unref();
  worker = parser;
  return parser;
}

/**
 * A worker that failed or stopped answers no more: the job it had fails (past the memory limit,
 * with `MGMT_DOCUMENT_TOO_COMPLEX`), the waiting jobs go to a new worker.
 */
function stopped(parser: Worker, error: unknown): void {
  if (worker !== parser) return;
  worker = undefined;
  const job = running;
  running = undefined;
  if (job !== undefined) {
    const outOfMemory = (error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY';
    job.reject(
      outOfMemory ? new PorticoError('MGMT_DOCUMENT_TOO_COMPLEX', { file: job.file, limitMb: memoryMb }) : error,
    );
  }
  dispatchNext(job?.owner);
}

// From the TypeScript sources (bin/portico.js, the tests) the worker loads through tsx's
// loader, which a worker does not inherit; from the built dist/ it is plain JavaScript.
function createWorker(resourceLimits: ResourceLimits): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`./api-parse-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry, { resourceLimits });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((api) => api.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(boot, { eval: true, resourceLimits });
}

/** How an error of {@link parseApiDocument} crosses to the main thread. */
export function errorToWire(error: unknown): WireError {
  if (error instanceof DefinitionError)
    return { kind: 'definition', file: error.file, problems: error.problems, problemCount: error.problemCount };
  if (error instanceof PorticoError) {
    const { code, params, status, headers } = error;
    return { kind: 'portico', code, params, status, headers: { ...headers } };
  }
  const { message, stack } = error instanceof Error ? error : new Error(String(error));
  return { kind: 'other', message, stack };
}

/** The error again, of its own class, with the same message. */
export function errorFromWire(wire: WireError): Error {
  if (wire.kind === 'definition') return new DefinitionError(wire.file, wire.problems, wire.problemCount);
  if (wire.kind === 'portico') return new PorticoError(wire.code, wire.params, wire);
  const error = new Error(wire.message);
  error.stack = wire.stack;
  return error;
}
