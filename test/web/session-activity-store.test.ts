/**
 * What web sessions' idle timeout and stateless pre-sessions rest on in the store, on SQLite and
 * PostgreSQL: `findSession` with an idle limit records activity at most once a minute and ends an
 * idle session; migration 0017 keeps the sessions that exist (active as of the upgrade) and
 * deletes the old stored pre-sessions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Migrator, sql } from 'kysely';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import { hashToken } from '../../src/store/secrets.ts';
import { createSession, findSession } from '../../src/store/sessions.ts';
import { migrate } from '../../src/store/store.ts';
import type { Db } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';

const minute = 60_000;
const hour = 60 * minute;

async function lastSeen(db: Db, token: string): Promise<number | undefined> {
  const row = await db.selectFrom('sessions').select('last_seen').where('id', '=', hashToken(token)).executeTakeFirst();
  return row?.last_seen;
}

for (const backend of storeBackends) {
  describe(`session activity in the store (${backend.name})`, () => {
    test('activity is recorded only once a minute has passed since the last record', async () => {
      const t = await backend.open();
      try {
        const db = t.store.db;
        const { token, session } = await createSession(db, { kind: 'portal', userId: 'u1', ttlMs: 8 * hour });
        const start = session.last_seen;
        assert.equal(await lastSeen(db, token), start);
        await findSession(db, token, ['portal'], { idleMs: hour, now: start + 59_000 });
        assert.equal(await lastSeen(db, token), start, 'no write within the minute');
        const found = await findSession(db, token, ['portal'], { idleMs: hour, now: start + 61_000 });
        assert.equal(found?.last_seen, start + 61_000);
        assert.equal(await lastSeen(db, token), start + 61_000);
        const later = start + 61_000 + 59 * minute;
        assert.ok(await findSession(db, token, ['portal'], { idleMs: hour, now: later }), 'idle 59 minutes: live');
        assert.equal(await lastSeen(db, token), later);
      } finally {
        await t.dispose();
      }
    });

    test('a session idle past the limit is deleted; without a limit (API tokens) it lives to its expiry', async () => {
      const t = await backend.open();
      try {
        const db = t.store.db;
        const web = await createSession(db, { kind: 'provider', userId: 'u1', ttlMs: 8 * hour });
        const api = await createSession(db, { kind: 'token', userId: 'u1', ttlMs: 720 * hour });
        const idle = web.session.last_seen + hour + 1;
        assert.equal(await findSession(db, web.token, ['provider'], { idleMs: hour, now: idle }), undefined);
        assert.equal(await lastSeen(db, web.token), undefined, 'the idle session row is gone');
        const apiLater = api.session.last_seen + 100 * hour;
        assert.equal((await findSession(db, api.token, ['token'], { now: apiLater }))?.user_id, 'u1');
        assert.equal(await lastSeen(db, api.token), api.session.last_seen, 'a token lookup writes nothing');
      } finally {
        await t.dispose();
      }
    });

    test('migration 0017 keeps existing sessions active as of the upgrade and deletes stored pre-sessions', async () => {
      const t = await backend.open(false);
      try {
        const db = t.store.db;
        const migrator = new Migrator({ db, provider: migrationProvider(t.store.dialect) });
        assert.equal((await migrator.migrateTo('0016-consumer-org-provider-created')).error, undefined);
        const expires = Date.now() + 8 * hour;
        for (const [id, kind] of [
          ['s-portal', 'portal'],
          ['s-pre', 'pre-portal'],
          ['s-pre-console', 'pre-provider'],
        ])
          await sql`insert into sessions (id, kind, user_id, csrf_token, created_at, expires_at)
            values (${id}, ${kind}, '', 'csrf', '2026-01-01T00:00:00.000Z', ${expires})`.execute(db);
        await sql`insert into session_values (session_id, name, value, expires_at)
          values ('s-pre', 'x', 'y', ${expires})`.execute(db);
        const upgradedFrom = Date.now();
        await migrate(db, t.store.dialect);
        const rows = await db.selectFrom('sessions').select(['id', 'last_seen']).execute();
        assert.deepEqual(
          rows.map((r) => r.id),
          ['s-portal'],
        );
        assert.ok(rows[0].last_seen >= upgradedFrom && rows[0].last_seen <= Date.now());
        assert.equal((await db.selectFrom('session_values').selectAll().execute()).length, 0);
      } finally {
        await t.dispose();
      }
    });
  });
}
