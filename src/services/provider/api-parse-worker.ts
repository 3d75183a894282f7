/**
 * The worker thread of api-parse-pool.ts: parses and validates each API document it is sent
 * and answers the definition or the error, so the main thread only receives the result.
 */
import { parentPort } from 'node:worker_threads';
import { parseApiDocument } from '../../definitions/index.ts';
import { assemblyProblems } from '../../policies/check-assembly.ts';
import { errorToWire } from './api-parse-pool.ts';
import type { ParseJob, ParseReply } from './api-parse-pool.ts';
import { toBatches } from './value-batches.ts';

const port = parentPort;
if (port === null) throw new Error('api-parse-worker.ts runs as a worker thread (api-parse-pool.ts starts it)');

port.on('message', ({ id, text, file }: ParseJob) => {
  let reply: ParseReply;
  try {
    reply = { id, batches: toBatches(parseApiDocument(text, file, assemblyProblems)) };
  } catch (error) {
    reply = { id, error: errorToWire(error) };
  }
  port.postMessage(reply);
});
