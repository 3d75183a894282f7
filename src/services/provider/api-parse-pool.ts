/**
 * Parses and validates an imported API document on a worker thread, so that a process serving
 * the gateway too (`portico serve --role all`) goes on answering its calls while a large
 * document is read: 40,000 paths take seconds of CPU, which on the main thread every gateway
 * call waited for. One worker for the process, started at the first large import, ended by
 * {@link closeApiParseWorker} (the platform's close); it takes its jobs in order.
 *
 * A small document (under {@link mainThreadChars}) is read on the calling thread, with no
 * worker to start for it. The result and the errors are the same either way
 * (test/definitions/parse-worker.test.ts).
 */
import { Worker } from 'node:worker_threads';
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

interface Waiting {
  resolve(definition: ApiDefinition): void;
  reject(error: unknown): void;
}

let worker: Worker | undefined;
const waiting = new Map<number, Waiting>();
const inFlight = new Set<Promise<ApiDefinition>>();
let nextId = 1;

/**
 * {@link parseApiDocument} with the policies' assembly check, as an import runs it: a large
 * document in the worker ({@link parseInWorker}), a small one here.
 * @throws the `DEF_PARSE` / `DEF_INVALID` errors of parseApiDocument, with the same messages and problems.
 */
export async function parseImportedApi(text: string, file: string): Promise<ApiDefinition> {
  if (text.length < mainThreadChars) return parseApiDocument(text, file, assemblyProblems);
  return parseInWorker(text, file);
}

/** {@link parseApiDocument} with the policies' assembly check, in the worker, whatever the size. */
export function parseInWorker(text: string, file: string): Promise<ApiDefinition> {
  const job: ParseJob = { id: nextId++, text, file };
  const parser = started();
  const parsed = new Promise<ApiDefinition>((resolve, reject) => {
    waiting.set(job.id, { resolve, reject });
    // Held open while a job runs, not while idle: an idle worker never keeps the process alive.
    parser.ref();
    parser.postMessage(job);
  });
  inFlight.add(parsed);
  const settled = () => inFlight.delete(parsed);
  parsed.then(settled, settled);
  return parsed;
}

/** Ends the worker once its jobs are answered; a later import starts another. */
export async function closeApiParseWorker(): Promise<void> {
  const running = worker;
  if (running === undefined) return;
  await Promise.allSettled([...inFlight]);
  if (worker === running && waiting.size === 0) {
    worker = undefined;
    await running.terminate();
  }
}

function started(): Worker {
  if (worker !== undefined) return worker;
  const parser = createWorker();
  parser.on('message', (reply: ParseReply) => {
    const job = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (waiting.size === 0) parser.unref();
    if (job === undefined) return;
    if ('error' in reply) job.reject(errorFromWire(reply.error));
    else fromBatches(reply.batches).then((definition) => job.resolve(definition as ApiDefinition), job.reject);
  });
  parser.on('error', (error) => failWaiting(parser, error));
  parser.on('exit', (code) => failWaiting(parser, new Error(`the API document parser stopped (exit code ${code})`)));
  parser.unref();
  worker = parser;
  return parser;
}

/** A worker that failed or stopped answers no more: its jobs fail, the next import starts another. */
function failWaiting(parser: Worker, error: unknown): void {
  if (worker !== parser) return;
  worker = undefined;
  const jobs = [...waiting.values()];
  waiting.clear();
  for (const job of jobs) job.reject(error);
}

// From the TypeScript sources (bin/portico.js, the tests) the worker loads through tsx's
// loader, which a worker does not inherit; from the built dist/ it is plain JavaScript.
function createWorker(): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`./api-parse-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry);
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((api) => api.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(boot, { eval: true });
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
