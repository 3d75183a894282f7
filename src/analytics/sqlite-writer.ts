/**
 * Activity events written to a SQLite file from a worker thread with its own connection, so the
 * gateway's event loop never runs the insert.
 *
 * better-sqlite3 is synchronous: on the gateway's thread a 500-row batch held every request in
 * flight for ~4 ms, and cutting it into 50-row transactions to keep stalls short cost ~3.7 µs
 * more per row (each commit rewrites the same hot pages to the WAL). On its own thread a batch
 * is one transaction. The gateway sends plain row arrays (cheap to copy between threads); the
 * thread runs the two statements `store/analytics.ts` prepares on the main connection too.
 *
 * The thread's code is a small CommonJS string evaluated in the worker, not a module file: a
 * worker does not inherit the tsx loader that runs the TypeScript sources, and the string needs
 * nothing of ours but the SQL it is given.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const threadCode = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
for (const pragma of workerData.pragmas) db.pragma(pragma);
let write;
// Prepared at the first write (and again after a failed one), inside its error handling.
function statements() {
  if (!write) {
    const insert = db.prepare(workerData.insertSql);
    const upsert = db.prepare(workerData.upsertSql);
    // Values as arguments, not one array: better-sqlite3 reads an array's elements one by one
    // through V8's generic property lookup (~0.5 µs more per 28-value row).
    write = db.transaction((rows, rollups) => {
      for (const row of rows) insert.run(...row);
      for (const row of rollups) upsert.run(...row);
    });
  }
  return write;
}
parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.postMessage({ id: message.id });
    return;
  }
  try {
    statements()(message.rows, message.rollups);
    parentPort.postMessage({ id: message.id });
  } catch (error) {
    write = undefined;
    parentPort.postMessage({ id: message.id, error: String((error && error.message) || error) });
  }
});
`;

export interface SqliteWriterOptions {
  /** The database file (the store's own). */
  file: string;
  insertSql: string;
  upsertSql: string;
}

interface Pending {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** One writer thread; `write` resolves once the batch is committed, rejects if it was not. */
export class SqliteWriterThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly options: SqliteWriterOptions) {}

  private start(): Worker {
    const worker = new Worker(threadCode, {
      eval: true,
      // A small young generation keeps the thread's share of memory small; the old generation is
      // left unbounded, since a batch with payloads captured can hold tens of megabytes of text
      // (500 events × two bodies up to PORTICO_ANALYTICS_MAX_PAYLOAD each).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        file: this.options.file,
        busyTimeoutMs: 5000,
        // WAL is the file's mode already; this is per connection. The page cache stays at SQLite's
        // default (2 MB): 16 MB saved ~1 µs per row and cost its size in every gateway's memory.
        pragmas: ['synchronous = NORMAL'],
        insertSql: this.options.insertSql,
        upsertSql: this.options.upsertSql,
      },
    });
    worker.on('message', (message: { id: number; error?: string }) => {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (this.pending.size === 0) worker.unref();
      if (message.error === undefined) waiting.resolve();
      else waiting.reject(new Error(`activity events not written: ${message.error}`));
    });
    // Once per thread (its 'error' is followed by its 'exit'): what it had not answered fails.
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the activity writer thread stopped (exit code ${code})`)));
    // Held only while a write is under way: an idle thread must not keep a stopping process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Commits `rows` (event values in column order) and `rollups` (rollup values) in one transaction. */
  write(rows: unknown[][], rollups: unknown[][]): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    if (this.pending.size === 0) worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, rows, rollups });
    });
  }

  /** Closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const id = this.nextId++;
    worker.ref();
    await new Promise<void>((resolve) => {
      this.pending.set(id, { resolve, reject: () => resolve() });
      worker.postMessage({ id, close: true });
    });
    this.worker = undefined;
    await worker.terminate();
  }
}
