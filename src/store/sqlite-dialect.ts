/**
 * Kysely's SQLite dialect, with write transactions that take SQLite's write lock as they begin
 * (`begin immediate`). Another connection writes the same file: the analytics writer thread
 * (analytics/sqlite-writer.ts). A deferred transaction that has read and then writes cannot wait
 * for that writer: SQLite answers SQLITE_BUSY at once, without the busy timeout, since waiting
 * could deadlock. Begun immediate, the transaction waits (busy_timeout) like any single write.
 * A read-only transaction (`setAccessMode('read only')`, the store's consistent reads) stays
 * deferred: it takes no lock, and reads a snapshot while others write.
 */
import { CompiledQuery, SqliteDialect, SqliteDriver } from 'kysely';
import type { DatabaseConnection, Driver, SqliteDialectConfig, TransactionSettings } from 'kysely';

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection, settings?: TransactionSettings): Promise<void> {
    const begin = settings?.accessMode === 'read only' ? 'begin' : 'begin immediate';
    await connection.executeQuery(CompiledQuery.raw(begin));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}
