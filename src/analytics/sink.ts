/**
 * The activity-log sink: events are queued on the response path (no I/O there) and written
 * in multi-row batches when the batch is full or the flush interval passes (Kong's queued
 * log plugins). `close()` flushes what is left, so a clean stop loses nothing; a crash loses
 * at most the events not yet written (one batch, or one interval's worth).
 *
 * Where they are written: a SQLite file from a writer thread (sqlite-writer.ts), one
 * transaction per batch, off the event loop; PostgreSQL through the store's pool (asynchronous
 * already); an in-memory SQLite database (tests) on the connection itself.
 */
import type { Logger } from 'pino';
import { eventInsertSql, insertEvents, insertEventsSqlite, sqliteBatch } from '../store/analytics.ts';
import { rollupUpsertSql } from '../store/rollup.ts';
import type { NewActivityEvent } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { SqliteWriterThread } from './sqlite-writer.ts';

// Writes on the event loop itself are synchronous (better-sqlite3): one 500-row insert holds it
// for ~4 ms, which every request in flight waits out. Smaller statements with a turn of the event
// loop between them keep each stall well under a millisecond.
const rowsPerWrite = 50;

/** Lets the requests waiting on the event loop run before the next write. */
function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface AnalyticsSinkOptions {
  store: Store;
  logger: Logger;
  batchSize: number;
  flushMs: number;
  /** Events held at most while the store is slow or down; beyond it the oldest are dropped. */
  maxQueued?: number;
}

export class AnalyticsSink {
  private queue: NewActivityEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  dropped = 0;
  written = 0;

  /** Where batches are written: a writer thread (SQLite file), the event loop (in-memory SQLite), or the PostgreSQL pool. */
  readonly writer: 'thread' | 'loop' | 'pool';
  private readonly thread: SqliteWriterThread | undefined;
  private readonly write: (batch: NewActivityEvent[]) => Promise<void> | void;
  private readonly eventsPerWrite: number;

  constructor(private readonly options: AnalyticsSinkOptions) {
    const { store } = options;
    const { sqlite } = store;
    if (sqlite && !sqlite.memory) {
      const thread = new SqliteWriterThread({ file: sqlite.name, insertSql: eventInsertSql, upsertSql: rollupUpsertSql });
      this.writer = 'thread';
      this.thread = thread;
      this.write = (batch) => {
        const { rows, rollups } = sqliteBatch(batch);
        return thread.write(rows, rollups);
      };
    } else if (sqlite) {
      this.writer = 'loop';
      this.write = (batch) => insertEventsSqlite(sqlite, batch);
    } else {
      this.writer = 'pool';
      this.write = (batch) => store.transaction((trx) => insertEvents(trx, batch));
    }
    this.eventsPerWrite = this.writer === 'loop' ? Math.min(options.batchSize, rowsPerWrite) : options.batchSize;
  }

  /** Queues one event; never blocks, never throws. */
  record(event: NewActivityEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    const max = this.options.maxQueued ?? 100_000;
    if (this.queue.length > max) {
      this.queue.shift();
      this.dropped++;
    }
    if (this.queue.length >= this.options.batchSize) void this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.flush(), this.options.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything queued so far; resolves when written (or failed and re-queued). */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.writing = this.writing.then(() => this.writeQueued());
    return this.writing;
  }

  private async writeQueued(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.eventsPerWrite);
      try {
        await this.write(batch);
        this.written += batch.length;
        if (this.writer === 'loop' && this.queue.length > 0) await yieldToRequests();
      } catch (error) {
        // Keep the batch for the next attempt; the store may be restarting.
        this.queue.unshift(...batch);
        this.options.logger.warn({ err: error, queued: this.queue.length }, 'analytics batch not written; will retry');
        if (!this.closed && this.timer === undefined) {
          this.timer = setTimeout(() => void this.flush(), Math.max(this.options.flushMs, 1000));
          this.timer.unref();
        }
        return;
      }
    }
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Flushes and stops accepting events. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.thread?.close();
  }
}
