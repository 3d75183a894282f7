/**
 * The activity-log sink: events are queued on the response path (no I/O there) and written
 * in multi-row batches when the batch is full or the flush interval passes (Kong's queued
 * log plugins). `close()` flushes what is left, so a clean stop loses nothing; a crash loses
 * at most the events not yet written (one batch, or one interval's worth).
 */
import type { Logger } from 'pino';
import { insertEvents, insertEventsSqlite } from '../store/analytics.ts';
import type { NewActivityEvent } from '../store/schema.ts';
import type { Store } from '../store/store.ts';

// SQLite writes are synchronous (better-sqlite3): one 500-row insert holds the event loop for
// ~5 ms, which every request in flight waits out. Smaller statements with a turn of the event
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

  constructor(private readonly options: AnalyticsSinkOptions) {}

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
      const batch = this.queue.splice(0, Math.min(this.options.batchSize, rowsPerWrite));
      try {
        const { sqlite } = this.options.store;
        if (sqlite) insertEventsSqlite(sqlite, batch);
        else await this.options.store.transaction((trx) => insertEvents(trx, batch));
        this.written += batch.length;
        if (this.queue.length > 0) await yieldToRequests();
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
  }
}
