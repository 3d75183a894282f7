/**
 * Real stores for tests: a fresh SQLite file, and a fresh PostgreSQL database on the
 * machine's server (created per run, dropped after). `PORTICO_TEST_PG` overrides the server
 * URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore } from '../../src/store/store.ts';
import type { Store } from '../../src/store/store.ts';

export const pgServerUrl = process.env.PORTICO_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestStore {
  store: Store;
  url: string;
  dispose(): Promise<void>;
}

/** A fresh SQLite store in a temporary folder (migrated unless `migrate` is false). */
export async function sqliteTestStore(migrate = true): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'portico-test-'));
  const url = `sqlite:${join(dir, 'portico.db')}`;
  const store = await openStore(url, { migrate });
  return {
    store,
    url,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh PostgreSQL database (`portico_test_<random>`), migrated unless `migrate` is false. */
export async function postgresTestStore(migrate = true): Promise<TestStore> {
  const name = `portico_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: pgServerUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(pgServerUrl);
  url.pathname = `/${name}`;
  const store = await openStore(url.toString(), { migrate });
  return {
    store,
    url: url.toString(),
    async dispose() {
      await store.close();
      const cleanup = new pg.Client({ connectionString: pgServerUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

/** Both backends, for suites that must run on each (STYLE habit 8). */
export const storeBackends: Array<{ name: string; open: (migrate?: boolean) => Promise<TestStore> }> = [
  { name: 'sqlite', open: sqliteTestStore },
  { name: 'postgres', open: postgresTestStore },
];
