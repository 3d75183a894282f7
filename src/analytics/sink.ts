/**
 * The activity-log sink: events are queued on the response path (no I/O there) and written
 * in multi-row batches when the batch is full or the flush interval passes (Kong's queued
 * log plugins). `close()` flushes what is left, so a clean stop loses nothing; a crash loses
 * at most the events not yet written (one batch, or one interval's worth). While the store is
 * down, one write is in flight at a time and retries back off (flush interval or 1 s, doubling
 * to 5 s); the outage is logged once, its end once, and events beyond `maxQueued` are dropped
 * oldest first and counted (`portico_analytics_events_dropped_total`).
 *
 * Where they are written: a SQLite file from a writer thread (sqlite-writer.ts), one transaction
 * per batch; PostgreSQL through a pool of their own whose every statement is bounded in time
 * (pg-writer.ts: a server that never answers fails the write, it does not hold it for ever);
 * in-memory SQLite (tests) on the connection.
 *
 * To the writer thread, events go in chunks of {@link eventsPerHandOff} as row arrays and the
 * batch is collected there (issue 18; sqlite-writer.ts): this thread holds one chunk at most. The
 * sink still ends each batch (`batchSize` handed over, `flushMs` after its first event, a flush)
 * and sums its rollups as the chunks go. While commits fail, the thread keeps the events and
 * retries when the sink's back-off says so; if it dies, the events it held are counted as dropped
 * and logged, and later ones wait here until the retry starts a new thread. The pool and
 * in-memory writers keep whole batches here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { rollupValues } from '../store/analytics-writes.ts';
import { RollupSum } from '../store/rollup.ts';
import type { NewActivityEvent } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { batchWriter } from './batch-writer.ts';
import type { BatchWriter } from './batch-writer.ts';
import { SqliteWriterThread } from './sqlite-writer.ts';
import type { WriterReport } from './sqlite-writer.ts';
import { ScopeRefs } from './scope-refs.ts';

/** Events handed to the writer thread at a time: at 2 000 calls/s, 16 ms' worth (a scavenge came every ~220 ms). */
export const eventsPerHandOff = 32;

export interface AnalyticsSinkOptions {
  store: Store;
  logger: Logger;
  batchSize: number;
  flushMs: number;
  /** Events held at most while the store is slow or down; beyond it the oldest are dropped (counted). */
  maxQueued?: number;
  /** PostgreSQL: the store's URL, for the writes' own pool (required there). */
  databaseUrl?: string;
  /** PostgreSQL: the longest one statement of a write may take (default 10 s; the client waits a second more). */
  writeTimeoutMs?: number;
  /** PostgreSQL: the longest `close()` waits for the last writes (default 5 s); what is left is logged and counted as dropped. */
  closeTimeoutMs?: number;
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
  /** Events recorded and not yet handed to a writer (to the thread: one chunk at most, unless it died). */
  private queue: NewActivityEvent[] = [];
  /** The interval's flush, or while writes fail the retry. */
  private timer: NodeJS.Timeout | undefined;
  /** The one write in flight, if any: events recorded meanwhile wait for it, they start no other. */
  private writing: Promise<void> | undefined;
  /** Set while writes fail: the next attempt waits `retryMs` (doubling), and the outage is logged once. */
  private failing = false;
  private retryMs = 0;
  private closed = false;
  /** Writer thread only: events handed to it and not yet committed or dropped. */
  private inThread = 0;
  /** Writer thread only: events handed to it in the batch it is collecting. */
  private inBatch = 0;
  /** Writer thread only: it died; events wait here until the retry starts a new one. */
  private threadLost = false;
  /** Writer thread only: the rollups of the batch it is collecting (a handful of rows), sent with its last chunk. */
  private readonly batchRollup = new RollupSum();
  /** Writer thread only: the scopes of the events handed over, each sent to the thread once. */
  private readonly scopes = new ScopeRefs();
  dropped = 0;
  written = 0;

  /** Where batches are written: a writer thread (SQLite file), the event loop (in-memory SQLite), or the PostgreSQL pool. */
  readonly writer: 'thread' | 'loop' | 'pool';
  private readonly thread: SqliteWriterThread | undefined;
  /** The loop's or the pool's writer (the thread takes chunks: {@link handOff}). */
  private readonly batches: BatchWriter | undefined;
  private readonly maxQueued: number;

  constructor(private readonly options: AnalyticsSinkOptions) {
    const { sqlite } = options.store;
    this.maxQueued = options.maxQueued ?? 100_000;
    if (sqlite && !sqlite.memory) {
      this.writer = 'thread';
      this.thread = new SqliteWriterThread({
        file: sqlite.name,
        maxQueued: this.maxQueued,
        onReport: (report) => this.threadReported(report),
        onStopped: (error) => this.threadStopped(error),
      });
    } else {
      this.batches = batchWriter(options.store, options);
      this.writer = this.batches.kind;
    }
  }

  /** Queues one event; never blocks, never throws. */
  record(event: NewActivityEvent): void {
    if (this.closed) return;
    this.queue.push(event);
    if (this.queue.length > this.maxQueued) {
      this.queue.shift();
      this.drop(1);
    }
    if (this.thread) {
      if (this.threadLost) return;
      if (this.queue.length >= Math.min(eventsPerHandOff, this.options.batchSize - this.inBatch)) this.handOff('stage');
      if (!this.failing && this.timer === undefined && this.queue.length + this.inBatch > 0) this.armTimer();
      return;
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
    this.timer = setTimeout(() => this.timerFired(), this.options.flushMs);
    this.timer.unref();
  }

  private timerFired(): void {
    if (!this.thread) {
      void this.drain('due');
      return;
    }
    this.timer = undefined;
    if (!this.failing) {
      void this.handOff('end');
      return;
    }
    this.threadLost = false;
    void this.handOff('commit');
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Writes everything queued so far; resolves when written (or failed and kept for the retry). */
  flush(): Promise<void> {
    if (!this.thread) return this.drain('all');
    this.threadLost = false;
    return this.handOff('commit');
  }

  /**
   * Hands the queue to the writer thread in chunks, ending its batch where full; `end` also ends it
   * with the last chunk (committed unless commits are failing), `commit` has every ended batch tried
   * (a flush, the retry). Resolves when the thread answered the last batch ended.
   */
  private handOff(mode: 'stage' | 'end' | 'commit'): Promise<void> {
    const thread = this.thread!;
    const { batchSize } = this.options;
    let answered: Promise<void> | undefined;
    do {
      const room = Math.min(eventsPerHandOff, batchSize - this.inBatch);
      const chunk = this.queue.length <= room ? this.queue : this.queue.splice(0, room);
      if (chunk === this.queue) this.queue = [];
      const part = this.scopes.chunk(chunk);
      this.batchRollup.add(chunk);
      this.inThread += chunk.length;
      this.inBatch += chunk.length;
      const last = this.queue.length === 0;
      if (this.inBatch < batchSize && (!last || mode === 'stage')) {
        thread.stage(part);
        continue;
      }
      this.inBatch = 0;
      // The batch's interval ends with it (while failing, the timer is the retry's: it stays).
      if (!this.failing) this.stopTimer();
      answered = thread.end(part, rollupValues(this.batchRollup.take()), last && mode === 'commit');
    } while (this.queue.length > 0);
    return answered ?? Promise.resolve();
  }

  private threadReported(report: WriterReport): void {
    let committed = 0;
    for (const events of report.committed) committed += events;
    this.inThread -= committed + report.dropped;
    this.written += committed;
    if (report.dropped > 0) this.drop(report.dropped);
    if (report.error !== undefined) this.writeFailed(new Error(`activity events not written: ${report.error}`));
    else if (committed > 0) this.writeSucceeded();
  }

  /** The thread died: what it held is lost (counted, logged); later events wait here for the retry. */
  private threadStopped(error: Error): void {
    const lost = this.inThread;
    this.inThread = 0;
    this.scopes.restart();
    this.inBatch = 0;
    this.batchRollup.take();
    this.drop(lost);
    this.options.logger.warn(
      { err: error, lost },
      'analytics writer thread stopped: the events it held are lost (counted as dropped)',
    );
    if (this.closed) return;
    this.threadLost = true;
    this.backOff();
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
    if (mode !== 'full') this.stopTimer();
    if (this.writing !== undefined) return this.writing.then(() => this.drain(mode));
    this.writing = this.writeQueued(mode).finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async writeQueued(mode: 'full' | 'due' | 'all'): Promise<void> {
    const { batches } = this;
    if (batches === undefined) return;
    let due = mode === 'all' ? Number.POSITIVE_INFINITY : mode === 'due' ? this.queue.length : 0;
    while (this.queue.length > 0 && (due > 0 || this.queue.length >= batches.eventsPerWrite)) {
      const batch = this.queue.splice(0, batches.eventsPerWrite);
      due -= batch.length;
      try {
        await batches.write(batch);
      } catch (error) {
        // Keep the batch for the next attempt; the store may be restarting. Events recorded
        // while it was out may have filled the queue: the bound holds, the oldest go first.
        this.queue.unshift(...batch);
        const over = this.queue.length - this.maxQueued;
        if (over > 0) {
          this.queue.splice(0, over);
          this.drop(over);
        }
        this.writeFailed(error);
        return;
      }
      this.written += batch.length;
      this.writeSucceeded();
      if (this.queue.length > 0) await batches.between();
    }
    // What arrived meanwhile and fills no batch waits for the interval.
    if (this.queue.length > 0 && !this.closed) this.armTimer();
  }

  private writeFailed(error: unknown): void {
    failedWrites.inc();
    if (this.backOff())
      this.options.logger.warn(
        { err: error, queued: this.pending },
        'analytics events not written; holding them and retrying with back-off',
      );
  }

  /** Schedules the next attempt, the wait doubling while writes keep failing; true when an outage starts. */
  private backOff(): boolean {
    const starts = !this.failing;
    if (starts) {
      this.failing = true;
      this.retryMs = Math.max(this.options.flushMs, 1000);
    } else {
      this.retryMs = Math.min(this.retryMs * 2, retryMaxMs);
    }
    if (this.closed) return starts;
    // The thread's batch interval gives way to the retry, which asks for the commit.
    if (this.thread) this.stopTimer();
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.timerFired(), this.retryMs);
      this.timer.unref();
    }
    return starts;
  }

  private writeSucceeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.logger.info({ queued: this.pending, dropped: this.dropped }, 'analytics writes recovered');
    if (!this.thread || this.closed) return;
    // The retry is done; what was handed over since waits for its batch's interval again.
    this.stopTimer();
    if (this.queue.length + this.inBatch > 0) this.armTimer();
  }

  private drop(events: number): void {
    if (events === 0) return;
    this.dropped += events;
    droppedEvents.inc(events);
  }

  /** Events recorded and not yet written, wherever they wait (here or in the writer thread). */
  get pending(): number {
    return this.queue.length + this.inThread;
  }

  /**
   * Flushes and stops accepting events. A write still waiting on PostgreSQL after `closeTimeoutMs`
   * is cut short; what could not be written is logged and counted as dropped.
   */
  async close(): Promise<void> {
    // The writer thread answers within SQLite's busy timeout (5 s); it cannot be ended mid-statement.
    if (this.thread) await this.flush();
    else await Promise.race([this.flush(), sleep(this.options.closeTimeoutMs ?? 5000, undefined, { ref: false })]);
    this.closed = true;
    this.stopTimer();
    // A write still waiting on the store is cut short (its batch comes back to the queue).
    await this.batches?.close();
    await this.writing;
    if (this.pending > 0) {
      this.options.logger.warn(
        { lost: this.pending },
        'analytics events not written at stop: the store is unreachable',
      );
      this.drop(this.pending);
      this.queue = [];
      this.inThread = 0;
    }
    await this.thread?.close();
  }
}
