/**
 * Migration 0018 on a store that already has provider users (every one could do everything):
 * each org's first user becomes its owner, the others administrators, on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import { migrate } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';

describe('migration 0018: provider user roles', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: the first user of each org becomes owner, the others administrator`, async () => {
      const t = await backend.open(false);
      try {
        const db = t.store.db;
        const migrator = new Migrator({ db, provider: migrationProvider(t.store.dialect) });
        assert.equal((await migrator.migrateTo('0016-consumer-org-provider-created')).error, undefined);
        for (const org of ['o1', 'o2']) {
          await sql`insert into provider_orgs (id, name, title, created_at)
            values (${org}, ${org}, ${org}, '2026-01-01T00:00:00.000Z')`.execute(db);
        }
        const users: Array<[string, string, string]> = [
          ['u-late', 'o1', '2026-03-01T00:00:00.000Z'],
          ['u-first', 'o1', '2026-01-02T00:00:00.000Z'],
          ['u-b', 'o2', '2026-02-01T00:00:00.000Z'],
          ['u-a', 'o2', '2026-02-01T00:00:00.000Z'],
        ];
        for (const [id, org, created] of users) {
          await sql`insert into provider_users (id, org_id, username, email, password_hash, created_at)
            values (${id}, ${org}, ${id}, '', 'x', ${created})`.execute(db);
        }
        await migrate(db as Parameters<typeof migrate>[0], t.store.dialect);
        const rows = await db.selectFrom('provider_users').select(['id', 'role']).orderBy('id').execute();
        assert.deepEqual(
          Object.fromEntries(rows.map((r) => [r.id, r.role])),
          // Same creation time: the lower id is first.
          { 'u-a': 'owner', 'u-b': 'administrator', 'u-first': 'owner', 'u-late': 'administrator' },
        );
      } finally {
        await t.dispose();
      }
    });
  }
});
