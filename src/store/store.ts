/**
 * Opens the store: SQLite (better-sqlite3, a file, the embedded default) or PostgreSQL (pg),
 * behind one Kysely instance, and runs the migrations. Everything above the store talks to
 * `Store.db`; a change that spans rows goes through `Store.transaction`.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type { Transaction } from 'kysely';
import pg from 'pg';
import { PorticoError } from '../errors.ts';
import { migrationProvider } from './migrations/index.ts';
import { ImmediateSqliteDialect } from './sqlite-dialect.ts';
import type { DialectName } from './migrations/index.ts';
import type { Database } from './schema.ts';

// PostgreSQL's bigint (analytics timestamps, counters) fits in a double for our ranges.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type Db = Kysely<Database> | Transaction<Database>;

/** Whether `error` is the store refusing a row that repeats a unique column (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  /** The better-sqlite3 handle on SQLite, for the few writes that use prepared statements directly. */
  readonly sqlite?: SqliteDatabase.Database;
  /** The URL with any password masked, for logs and errors. */
  readonly displayUrl: string;
  /** Runs `work` in one transaction; on SQLite it holds the write lock from the start (sqlite-dialect.ts). */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs several reads on one consistent view of the store: a REPEATABLE READ transaction on
   * PostgreSQL (each statement would otherwise see the commits made between them), a
   * read-only transaction on SQLite (in WAL mode it reads one snapshot, and takes no lock).
   */
  consistentRead<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Masks the password of a database URL. */
export function maskUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/**
 * The store holds password hashes and session and secret hashes: only its owner may read it.
 * A folder we create is 0700 and the database file 0600 (an existing one is tightened when we
 * own it); SQLite creates its -wal and -shm files with the database file's mode.
 */
function privateDatabaseFile(file: string): void {
  const folder = dirname(file);
  if (!existsSync(folder)) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
  }
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const stat = existsSync(path) ? statSync(path) : undefined;
    if (stat && (stat.mode & 0o077) !== 0 && stat.uid === process.getuid?.()) chmodSync(path, 0o600);
  }
}

function sqliteDatabase(file: string): SqliteDatabase.Database {
  if (file !== ':memory:') privateDatabaseFile(file);
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  return database;
}

async function postgresDialect(url: string): Promise<PostgresDialect> {
  // TCP keepalive, so a connection whose path died without a reset fails its query instead of
  // waiting for ever. No statement timeout here: migrations and rollup rebuilds run on this pool.
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A dropped connection must not crash the process: an idle one reaches the pool's 'error',
  // a checked-out one its own — where the running query already rejects. The pool replaces it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new PorticoError(
      'STORE_UNREACHABLE',
      { url: maskUrl(url), reason: (error as Error).message },
      { cause: error },
    );
  }
  return new PostgresDialect({ pool });
}

/** Opens the store at `url` (`sqlite:<file>` or `postgres://…`) and migrates it to the latest version. */
export async function openStore(url: string, options: { migrate?: boolean } = {}): Promise<Store> {
  const dialectName: DialectName = url.startsWith('postgres') ? 'postgres' : 'sqlite';
  const sqlite = dialectName === 'sqlite' ? sqliteDatabase(url.replace(/^sqlite:/, '')) : undefined;
  const dialect = sqlite ? new ImmediateSqliteDialect({ database: sqlite }) : await postgresDialect(url);
  const db = new Kysely<Database>({ dialect });
  if (options.migrate !== false) await migrate(db, dialectName);
  return {
    db,
    dialect: dialectName,
    sqlite,
    displayUrl: maskUrl(url),
    transaction: (work) => db.transaction().execute(work),
    consistentRead: (work) =>
      dialectName === 'postgres'
        ? db.transaction().setIsolationLevel('repeatable read').execute(work)
        : db.transaction().setAccessMode('read only').execute(work),
    close: () => db.destroy(),
  };
}

/** Runs pending migrations; a failure names the migration. */
export async function migrate(db: Kysely<Database>, dialect: DialectName): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new PorticoError(
      'STORE_UNREACHABLE',
      { url: dialect, reason: `migration ${failed} failed: ${(error as Error).message}` },
      { cause: error },
    );
  }
}

/** Resolves when the store answers a trivial query; rejects when it does not. */
export async function pingStore(store: Store): Promise<void> {
  await sql`select 1`.execute(store.db);
}
