/**
 * The writers the sink hands whole batches to: in-memory SQLite on the event loop, PostgreSQL
 * through its own bounded pool (pg-writer.ts). A SQLite file's writer thread takes chunks
 * instead (sqlite-writer.ts).
 */
import { insertEventsSqlite } from '../store/analytics-writes.ts';
import type { NewActivityEvent } from '../store/schema.ts';
import type { Store } from '../store/store.ts';
import { PostgresEventWriter } from './pg-writer.ts';

/** A writer of whole batches. */
export interface BatchWriter {
  readonly kind: 'loop' | 'pool';
  /** Events written at most in one write. */
  readonly eventsPerWrite: number;
  /** Writes one batch in one transaction; rejects (the batch not written) when the store failed it. */
  write(batch: NewActivityEvent[]): Promise<void> | void;
  /** What runs between two writes of one drain. */
  between(): Promise<void>;
  /** Cuts a write still waiting on the store short (it fails) and lets the connections go. */
  close(): Promise<void>;
}

// Writes on the event loop itself are synchronous (better-sqlite3): one 500-row insert holds it
// for ~4 ms, which every request in flight waits out. Smaller statements with a turn of the event
// loop between them keep each stall well under a millisecond.
const rowsPerWrite = 50;

/** The writer of a store that takes whole batches: in-memory SQLite, or PostgreSQL (a file's is the thread). */
export function batchWriter(
  store: Pick<Store, 'sqlite'>,
  options: { batchSize: number; databaseUrl?: string; writeTimeoutMs?: number },
): BatchWriter {
  const { sqlite } = store;
  if (sqlite) {
    // In-memory SQLite: written on the event loop, 50 events at a time, the requests let run between.
    return {
      kind: 'loop',
      eventsPerWrite: Math.min(options.batchSize, rowsPerWrite),
      write: (batch) => insertEventsSqlite(sqlite, batch),
      between: () => new Promise((resolve) => setImmediate(resolve)),
      close: async () => undefined,
    };
  }
  if (options.databaseUrl === undefined) throw new TypeError('the PostgreSQL activity writer needs databaseUrl');
  const pool = new PostgresEventWriter({ url: options.databaseUrl, timeoutMs: options.writeTimeoutMs ?? 10_000 });
  return {
    kind: 'pool',
    eventsPerWrite: options.batchSize,
    write: (batch) => pool.write(batch),
    between: async () => undefined,
    close: () => pool.close(),
  };
}
