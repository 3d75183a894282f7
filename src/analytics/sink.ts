/**
 * The activity-log sink: events are queued on the response path (no I/O there) and written
 * in multi-row batches when the batch is full or the flush interval passes (Kong's queued
 * log plugins). `close()` flushes what is left, so a clean stop loses nothing; a crash loses
 * at most the events not yet written (one batch, or one interval's worth). While the store is
 * down, one write is in flight at a time and retries back off (flush interval or 1 s, doubling
 * to 5 s); the outage is logged once, its end once, and events beyond `maxQueued` are dropped
 * oldest first and counted (`portico_analytics_events_dropped_total`).
 *
 * Where they are written: a SQLite file from a writer thread (sqlite-writer.ts), one
 * transaction per batch, off the event loop; PostgreSQL through the store's pool (asynchronous
 * already); an in-memory SQLite database (tests) on the connection itself.
 */
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { eventInsertSql, insertEvents, insertEventsSqlite, sqliteBatch } from '../store/analytics-writes.ts';
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
  /** Events held at most while the store is slow or down; beyond it the oldest are dropped (counted). */
  maxQueued?: number;
}

/** Longest wait between write attempts while the store is down. */
const retryMaxMs = 5000;

const droppedEvents = new Counter({
  name: 'portico_analytics_events_dropped_total',
  help: 'Activity events lost: dropped from a full queue while the store was down, or unwritten at stop',
});
const failedWrites = new Counter({
  name: 'portico_analytics_write_failures_total',
  help: 'Batch writes of activity events that failed (the events stay queued for the next attempt)',
});

export class AnalyticsSink {
  private queue: NewActivityEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The one write in flight, if any: events recorded meanwhile wait for it, they start no other. */
  private writing: Promise<void> | undefined;
  /** Set while writes fail: the next attempt waits `retryMs` (doubling), and the outage is logged once. */
  private failing = false;
  private retryMs = 0;
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
      const thread = new SqliteWriterThread({
        file: sqlite.name,
        insertSql: eventInsertSql,
        upsertSql: rollupUpsertSql,
      });
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
    if (this.queue.length > (this.options.maxQueued ?? 100_000)) {
      this.queue.shift();
      this.drop(1);
    }
    // While the store is failing the queue only grows: the retry timer takes it from there. While
    // a write is in flight, the one after it starts with full batches, or with the interval that
    // starts now (so no event waits much longer than `flushMs`, as before).
    if (this.failing) return;
    if (this.writing === undefined && this.queue.length >= this.options.batchSize) void this.drain('full');
    else this.armTimer();
  }

  /** The interval's flush, unless one is due already. */
  private armTimer(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => void this.drain('due'), this.options.flushMs);
    this.timer.unref();
  }

  /** Writes everything queued so far; resolves when written (or failed and kept for the retry). */
  flush(): Promise<void> {
    return this.drain('all');
  }

  /**
   * Starts the writes once the one in flight is done. What is written (in batches of at most
   * `eventsPerWrite`): `full`, full batches only (the rest waits for the interval or the next
   * fill); `due`, the events queued now (their interval passed, or a retry), then full batches;
   * `all`, until the queue is empty (`flush()`, `close()`).
   *
   * Under load, events keep arriving while a batch is written. Writing them as soon as that write
   * ended made most batches small (a gateway pinned to one core at ~5 000 req/s: median 65 events
   * of 500), and each batch pays a fixed cost (message, transaction, commit, WAL frames of the
   * hot pages) that a 50-event batch spreads over ten times fewer events.
   */
  private drain(mode: 'full' | 'due' | 'all'): Promise<void> {
    if (mode !== 'full' && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.writing !== undefined) return this.writing.then(() => this.drain(mode));
    this.writing = this.writeQueued(mode).finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async writeQueued(mode: 'full' | 'due' | 'all'): Promise<void> {
    let due = mode === 'all' ? Number.POSITIVE_INFINITY : mode === 'due' ? this.queue.length : 0;
    while (this.queue.length > 0 && (due > 0 || this.queue.length >= this.eventsPerWrite)) {
      const batch = this.queue.splice(0, this.eventsPerWrite);
      due -= batch.length;
      try {
        await this.write(batch);
      } catch (error) {
        // Keep the batch for the next attempt; the store may be restarting. Events recorded
        // while it was out may have filled the queue: the bound holds, the oldest go first.
        this.queue.unshift(...batch);
        const over = this.queue.length - (this.options.maxQueued ?? 100_000);
        if (over > 0) {
          this.queue.splice(0, over);
          this.drop(over);
        }
        this.writeFailed(error);
        return;
      }
      this.written += batch.length;
      this.writeSucceeded();
      if (this.writer === 'loop' && this.queue.length > 0) await yieldToRequests();
    }
    // What arrived meanwhile and fills no batch waits for the interval.
    if (this.queue.length > 0 && !this.closed) this.armTimer();
  }

  private writeFailed(error: unknown): void {
    failedWrites.inc();
    if (!this.failing) {
      this.failing = true;
      this.retryMs = Math.max(this.options.flushMs, 1000);
      this.options.logger.warn(
        { err: error, queued: this.queue.length },
        'analytics events not written; holding them and retrying with back-off',
      );
    } else {
      this.retryMs = Math.min(this.retryMs * 2, retryMaxMs);
    }
    if (!this.closed && this.timer === undefined) {
      this.timer = setTimeout(() => void this.drain('due'), this.retryMs);
      this.timer.unref();
    }
  }

  private writeSucceeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.logger.info({ queued: this.queue.length, dropped: this.dropped }, 'analytics writes recovered');
  }

  private drop(events: number): void {
    this.dropped += events;
    droppedEvents.inc(events);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Flushes and stops accepting events. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.queue.length > 0) {
      this.options.logger.warn(
        { lost: this.queue.length },
        'analytics events not written at stop: the store is unreachable',
      );
      this.drop(this.queue.length);
      this.queue = [];
    }
    await this.thread?.close();
  }
}
