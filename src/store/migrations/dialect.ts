import type { Kysely } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run against the schema as it was, not as typed now
export type AnyDb = Kysely<any>;

/** The column type of a 64-bit integer (epoch milliseconds, counters): SQLite's integer is already 64-bit. */
export function bigintType(dialect: DialectName): 'bigint' | 'integer' {
  return dialect === 'postgres' ? 'bigint' : 'integer';
}
