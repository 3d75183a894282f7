/**
 * Activity batches written to PostgreSQL through a pool of their own, bounded in time: a server
 * that takes the connection and never answers (paused, a half-dead network path), or statements
 * waiting on a lock, left the sink's one write in flight for ever and `close()` with it. Here
 * each statement is bounded on the server (`statement_timeout`) and, a second later, on the
 * client (`query_timeout`, for a server that cannot even cancel); a transaction its client left
 * is ended by the server (`idle_in_transaction_session_timeout`), so the rollup rows it locked
 * do not hold up the other gateway nodes; TCP keepalive notices a peer that is gone while the
 * connection idles. A connection that failed other than by an answer from the server is
 * discarded, not reused. The store's own pool (snapshots, the management plane) is not touched.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { insertEvents } from '../store/analytics-writes.ts';
import type { Database, NewActivityEvent } from '../store/schema.ts';

/** Deadlock detected, serialization failure: the transaction was rolled back and may simply be run again. */
const conflictCodes = new Set(['40P01', '40001']);

/** Attempts of one batch when it keeps losing to conflicts; past them the sink keeps it and backs off. */
const conflictAttempts = 3;

/**
 * Runs `attempt` again after a deadlock (40P01) or a serialization failure (40001), three
 * attempts in all, after a short random pause (the other transaction finishes meanwhile). Any
 * other failure is the caller's.
 */
export async function retryConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (tried >= conflictAttempts || typeof code !== 'string' || !conflictCodes.has(code)) throw error;
      await sleep(Math.random() * 50 * tried);
    }
  }
}

export interface PostgresEventWriterOptions {
  /** The store's database URL. */
  url: string;
  /** The longest one statement may take (server-side); the client gives up a second later. */
  timeoutMs: number;
}

/** Writes batches of activity events (one transaction each) through its own bounded pool. */
export class PostgresEventWriter {
  private readonly pool: pg.Pool;
  private readonly db: Kysely<Database>;
  /** Clients checked out, so that `close()` can cut one still waiting on the server. */
  private readonly inUse = new Set<pg.PoolClient>();
  private closed: Promise<void> | undefined;

  constructor(options: PostgresEventWriterOptions) {
    const { timeoutMs } = options;
    this.pool = new pg.Pool({
      connectionString: options.url,
      // The sink has one write in flight at a time; a second connection covers one being replaced.
      max: 2,
      application_name: 'portico-analytics',
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
      query_timeout: timeoutMs + 1000,
      idle_in_transaction_session_timeout: timeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    // A dropped connection must not crash the process (as in the store's pool): the query on it fails.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => client.on('error', () => {}));
    this.db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.discarding() }) });
  }

  /** Writes one batch in one transaction (tried again on conflicts); rejects when the store failed it or did not answer. */
  write(batch: NewActivityEvent[]): Promise<void> {
    return retryConflicts(() => this.db.transaction().execute((trx) => insertEvents(trx, batch)));
  }

  /** Cuts the connections still waiting on the server (their writes fail at once) and ends the pool. */
  close(): Promise<void> {
    for (const client of this.inUse) cut(client);
    this.closed ??= this.db.destroy();
    return this.closed;
  }

  /**
   * The pool as Kysely sees it: a client whose query failed without an answer from the server
   * (a timeout, a reset) is cut at once — the statements after it, the rollback included, fail
   * without waiting — and destroyed on release instead of going back to the pool.
   */
  private discarding(): PostgresPool {
    return {
      connect: async () => {
        const client = await this.pool.connect();
        this.inUse.add(client);
        let broken: Error | undefined;
        const wrapped = {
          query: async (text: string, parameters: readonly unknown[]) => {
            if (broken) throw broken;
            try {
              return await client.query(text, [...parameters]);
            } catch (error) {
              if (!(error instanceof pg.DatabaseError)) {
                broken = error as Error;
                cut(client);
              }
              throw error;
            }
          },
          release: () => {
            this.inUse.delete(client);
            client.release(broken);
          },
        };
        return wrapped as unknown as PostgresPoolClient;
      },
      end: () => this.pool.end(),
    };
  }
}

/** Destroys a client's socket: its pending queries fail now, not when the server answers. */
function cut(client: pg.PoolClient): void {
  (client as unknown as pg.Client).connection.stream.destroy();
}
