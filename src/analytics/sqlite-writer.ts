/**
 * Activity events written to a SQLite file from a worker thread with its own connection, so the
 * gateway's event loop never runs the insert.
 *
 * better-sqlite3 is synchronous: on the gateway's thread a 500-row batch held every request in
 * flight for ~4 ms, and cutting it into 50-row transactions to keep stalls short cost ~3.7 µs
 * more per row (each commit rewrites the same hot pages to the WAL). On its own thread a batch
 * is one transaction. The thread runs the statements `store/analytics-writes.ts` prepares on
 * the main connection too: a scope found or added, a call inserted, a rollup row added.
 *
 * The gateway hands events over in small chunks of plain row arrays (cheap to copy between
 * threads): each call's own values and its scope's ref, each scope's values sent once (see
 * `ScopeRefs` in sink.ts). The batch is collected here (issue 18): events held on the gateway's thread until
 * a batch of 500 filled survived its scavenges and were promoted. The gateway says where a batch
 * ends (full, its interval passed, a flush) and sends with its last chunk the batch's rollup rows
 * (summed there as the chunks went, a handful of rows); the thread commits each ended batch in
 * one transaction, the events and then the rollup upserts, as before. A batch that fails stays
 * here, with those ended after it, and is retried only when asked (`commit`): the gateway decides
 * the back-off. Beyond `maxQueued` events held, the oldest ended batches are dropped (whole, so
 * each batch's rollups stay those of its events). Every commit, failure and drop is reported to
 * `onReport`; if the thread dies, what it held is gone and `onStopped` says so (the sink counts
 * those events as dropped).
 *
 * The thread's code is a small CommonJS string evaluated in the worker, not a module file: a
 * worker does not inherit the tsx loader that runs the TypeScript sources, and the string needs
 * nothing of ours but the SQL it is given.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { callInsertSql, scopeInsertSql, scopeSelectSql } from '../store/analytics-writes.ts';
import { rollupSinceSql, rollupUpsertSql } from '../store/rollup.ts';

const threadCode = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
let write;
// Each scope the gateway sent (its ref → its values), and the stored id of those whose insert
// committed (by the values array: the rows of a chunk hold it). A failed commit forgets only
// what it added, since its inserts were rolled back.
let scopes = new Map();
let scopeIds = new WeakMap();
// Opened and prepared at the first commit (and again after a failed one), inside its error
// handling: a file that cannot be opened is a failed write, kept and retried, not a dead thread.
function statements() {
  if (!db) {
    const opened = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
    try {
      for (const pragma of workerData.pragmas) opened.pragma(pragma);
    } catch (error) {
      opened.close();
      throw error;
    }
    db = opened;
  }
  if (!write) {
    const addScope = db.prepare(workerData.scopeInsertSql);
    const findScope = db.prepare(workerData.scopeSelectSql).pluck();
    const insert = db.prepare(workerData.insertSql);
    const upsert = db.prepare(workerData.upsertSql);
    const rollupSince = db.prepare(workerData.rollupSinceSql);
    // Values as arguments, not one array: better-sqlite3 reads an array's elements one by one
    // through V8's generic property lookup (~0.5 µs more per row).
    write = db.transaction((batch, added) => {
      // A call stored already (same time and transaction id) is skipped; then the rollups are
      // those of the calls this transaction inserted, not the rows summed for the whole batch.
      let first;
      let skipped = false;
      for (const chunk of batch.chunks) {
        const { rows, scopes } = chunk;
        for (let i = 0; i < rows.length; i++) {
          const values = scopes[i];
          let id = scopeIds.get(values);
          if (id === undefined) id = added.get(values);
          if (id === undefined) {
            addScope.run(...values);
            id = findScope.get(...values);
            added.set(values, id);
          }
          const result = insert.run(id, ...rows[i]);
          if (result.changes === 0) skipped = true;
          else if (first === undefined) first = result.lastInsertRowid;
        }
      }
      if (!skipped) for (const row of batch.rollups) upsert.run(...row);
      else if (first !== undefined) rollupSince.run(first);
    });
  }
  return write;
}
// Ended batches not yet committed (oldest first), then the batch being collected: its chunks of
// rows, and (once ended) its rollup rows.
const ended = [];
let open = { chunks: [], events: 0, rollups: undefined };
let held = 0;
// Set by a failed commit: ended batches then wait for a commit asked for (the gateway's retry).
let failing = false;

// Whole batches, so that each one's rollups stay those of its events. The batch being collected
// is never dropped: the gateway ends it at its size.
function dropOldest() {
  let dropped = 0;
  while (held > workerData.maxQueued && ended.length > 0) {
    const oldest = ended.shift();
    held -= oldest.events;
    dropped += oldest.events;
  }
  return dropped;
}

function commitEnded(report) {
  while (ended.length > 0) {
    const batch = ended[0];
    const added = new Map();
    try {
      statements()(batch, added);
    } catch (error) {
      write = undefined;
      failing = true;
      report.error = String((error && error.message) || error);
      return;
    }
    for (const [values, id] of added) scopeIds.set(values, id);
    ended.shift();
    held -= batch.events;
    failing = false;
    report.committed.push(batch.events);
  }
}

parentPort.on('message', (message) => {
  if (message.close) {
    if (db) db.close();
    parentPort.postMessage({ id: message.id, committed: [], dropped: 0 });
    return;
  }
  if (message.forget) scopes = new Map();
  if (message.scopes) for (let i = 0; i < message.scopes.length; i += 2) scopes.set(message.scopes[i], message.scopes[i + 1]);
  if (message.rows.length > 0) {
    const values = message.refs.map((ref) => {
      const found = scopes.get(ref);
      if (found === undefined) throw new Error('activity scope ' + ref + ' was never sent');
      return found;
    });
    open.chunks.push({ rows: message.rows, scopes: values });
    open.events += message.rows.length;
    held += message.rows.length;
  }
  if (message.id === undefined) return;
  if (open.events > 0) {
    open.rollups = message.rollups;
    ended.push(open);
    open = { chunks: [], events: 0, rollups: undefined };
  }
  const dropped = dropOldest();
  const report = { id: message.id, committed: [], dropped };
  if (message.commit || !failing) commitEnded(report);
  parentPort.postMessage(report);
});
`;

/**
 * Events as the thread takes them: each call's own values (`callColumns` order) and its scope's
 * ref; the scopes this thread has not been sent yet (ref, values, ref, values…); `forget`, drop
 * the refs sent before (the sender started over: rows already taken keep their scope's values).
 */
export interface WriterChunk {
  rows: unknown[][];
  refs: number[];
  scopes?: unknown[];
  forget?: boolean;
}

/** What the thread did with what it was given: batches committed (their sizes), events dropped, a failed commit. */
export interface WriterReport {
  committed: number[];
  dropped: number;
  error?: string;
}

export interface SqliteWriterOptions {
  /** The database file (the store's own). */
  file: string;
  /** Events held at most while commits fail; beyond it the oldest batches are dropped (reported). */
  maxQueued: number;
  /** Called for every report, before the `end` it answers resolves. */
  onReport: (report: WriterReport) => void;
  /** Called when the thread died: every event it held is lost. The next hand-off starts a new thread. */
  onStopped: (error: Error) => void;
}

/** One writer thread, collecting chunks of rows into batches and committing each in one transaction. */
export class SqliteWriterThread {
  private worker: Worker | undefined;
  private readonly answers = new Map<number, () => void>();
  private nextId = 0;

  constructor(private readonly options: SqliteWriterOptions) {}

  private start(): Worker {
    const worker = new Worker(threadCode, {
      eval: true,
      // A small young generation keeps the thread's share of memory small; the old generation is
      // left unbounded, since a batch with payloads captured can hold tens of megabytes of text
      // (500 events × two bodies up to PORTICO_ANALYTICS_MAX_PAYLOAD each), and it holds up to
      // `maxQueued` events while the store is down.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        file: this.options.file,
        busyTimeoutMs: 5000,
        // WAL is the file's mode already; this is per connection. The page cache stays at SQLite's
        // default (2 MB): 16 MB saved ~1 µs per row and cost its size in every gateway's memory.
        pragmas: ['synchronous = NORMAL'],
        scopeInsertSql,
        scopeSelectSql,
        insertSql: callInsertSql,
        upsertSql: rollupUpsertSql,
        rollupSinceSql,
        maxQueued: this.options.maxQueued,
      },
    });
    worker.on('message', (report: WriterReport & { id?: number }) => {
      this.options.onReport(report);
      if (report.id === undefined) return;
      const answered = this.answers.get(report.id);
      if (!answered) return;
      this.answers.delete(report.id);
      if (this.answers.size === 0) worker.unref();
      answered();
    });
    // Its 'error' (an uncaught exception) comes before its 'exit'; the messages it posted before
    // dying are delivered before 'exit' too, so what it reported is counted before what it lost.
    let failure: Error | undefined;
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.options.onStopped(failure ?? new Error(`the activity writer thread stopped (exit code ${code})`));
      for (const answered of this.answers.values()) answered();
      this.answers.clear();
    });
    // Held only while an answer is awaited: an idle thread must not keep a stopping process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Adds a chunk of events to the batch being collected. */
  stage(chunk: WriterChunk): void {
    (this.worker ?? this.start()).postMessage(chunk);
  }

  /**
   * Adds a chunk and ends the batch, with the rollup rows (values in column order) its events sum
   * into. The ended batches are committed unless commits are failing;
   * with `commit`, they are tried whatever the last attempt did (a retry, a flush). Resolves once
   * the thread answered (its report delivered first) or stopped.
   */
  end(chunk: WriterChunk, rollups: unknown[][], commit: boolean): Promise<void> {
    return this.ask({ ...chunk, rollups, commit });
  }

  private ask(message: object): Promise<void> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    if (this.answers.size === 0) worker.ref();
    return new Promise<void>((resolve) => {
      this.answers.set(id, resolve);
      worker.postMessage({ id, ...message });
    });
  }

  /** Closes the thread's connection (what it still holds is not written) and ends the thread. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.ask({ close: true });
    this.worker = undefined;
    await worker.terminate();
  }
}
