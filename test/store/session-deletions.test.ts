/**
 * Ending a user's sessions (src/store/sessions.ts `deleteUserSessions`, `deleteSession`): each
 * deletes exactly the sessions it names — of the kinds given, all but a kept one, one by id or
 * by a token's public id — with their session values, and nothing of another user; on SQLite
 * and on the real PostgreSQL.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { SessionKind } from '../../src/store/schema.ts';
import {
  createSession,
  deleteSession,
  deleteUserSessions,
  listUserSessions,
  putSessionValue,
} from '../../src/store/sessions.ts';
import type { Db } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

for (const backend of storeBackends) {
  describe(`session deletions (${backend.name})`, () => {
    let t: TestStore;
    /** Stored ids and tokens by label: `<user>-<kind>-<n>`. */
    let ids: Record<string, string>;
    let tokens: Record<string, string>;

    before(async () => {
      t = await backend.open();
    });
    after(() => t?.dispose());

    beforeEach(async () => {
      await t.store.db.deleteFrom('session_values').execute();
      await t.store.db.deleteFrom('sessions').execute();
      ids = {};
      tokens = {};
      const make = async (label: string, userId: string, kind: SessionKind) => {
        const created = await createSession(t.store.db, { kind, userId, ttlMs: 60_000 });
        ids[label] = created.session.id;
        tokens[label] = created.token;
        await putSessionValue(t.store.db, created.session.id, 'flash', label, Date.now() + 60_000);
      };
      for (const user of ['ann', 'bob']) {
        await make(`${user}-provider-1`, user, 'provider');
        await make(`${user}-provider-2`, user, 'provider');
        await make(`${user}-token-1`, user, 'token');
        await make(`${user}-token-2`, user, 'token');
        await make(`${user}-portal-1`, user, 'portal');
      }
    });

    /** The labels whose session is left, and those whose value is left. */
    const left = async () => {
      const byId = Object.fromEntries(Object.entries(ids).map(([label, id]) => [id, label]));
      const sessions = await t.store.db.selectFrom('sessions').select('id').execute();
      const values = await t.store.db.selectFrom('session_values').select('session_id').execute();
      return {
        sessions: sessions.map((row) => byId[row.id]).sort(),
        values: values.map((row) => byId[row.session_id]).sort(),
      };
    };
    const all = () => Object.keys(ids).sort();
    const without = (...labels: string[]) => all().filter((label) => !labels.includes(label));
    const inTransaction = <T>(work: (trx: Db) => Promise<T>) => t.store.transaction(work);

    test('of the kinds given: every session of the user of those kinds, with its values', async () => {
      const ended = await inTransaction((trx) => deleteUserSessions(trx, 'ann', { kinds: ['provider', 'token'] }));
      assert.equal(ended, 4);
      const gone = without('ann-provider-1', 'ann-provider-2', 'ann-token-1', 'ann-token-2');
      assert.deepEqual(await left(), { sessions: gone, values: gone });
    });

    test('with a kept id: every other session of those kinds, the kept one and its values stay', async () => {
      const keepId = ids['ann-token-1'];
      const ended = await inTransaction((trx) =>
        deleteUserSessions(trx, 'ann', { kinds: ['provider', 'token'], keepId }),
      );
      assert.equal(ended, 3);
      const gone = without('ann-provider-1', 'ann-provider-2', 'ann-token-2');
      assert.deepEqual(await left(), { sessions: gone, values: gone });
    });

    test('one id: only that session of the user, of the kinds given', async () => {
      const id = ids['ann-provider-2'];
      assert.equal(
        await inTransaction((trx) => deleteUserSessions(trx, 'ann', { kinds: ['provider'], idPrefix: id })),
        1,
      );
      const gone = without('ann-provider-2');
      assert.deepEqual(await left(), { sessions: gone, values: gone });
      // Of another kind than asked: not ended.
      const portal = ids['ann-portal-1'];
      assert.equal(
        await inTransaction((trx) => deleteUserSessions(trx, 'ann', { kinds: ['token'], idPrefix: portal })),
        0,
      );
      assert.deepEqual(await left(), { sessions: gone, values: gone });
    });

    test("another user's session id or token id ends nothing", async () => {
      const id = ids['bob-token-1'];
      const idPrefix = id.slice(0, 16);
      assert.equal(await inTransaction((trx) => deleteUserSessions(trx, 'ann', { kinds: ['token'], idPrefix: id })), 0);
      assert.equal(await inTransaction((trx) => deleteUserSessions(trx, 'ann', { kinds: ['token'], idPrefix })), 0);
      assert.deepEqual(await left(), { sessions: all(), values: all() });
    });

    test("a token's public id (its stored id's first 16 digits) ends that token only", async () => {
      const idPrefix = ids['bob-token-2'].slice(0, 16);
      assert.equal(await inTransaction((trx) => deleteUserSessions(trx, 'bob', { kinds: ['token'], idPrefix })), 1);
      const gone = without('bob-token-2');
      assert.deepEqual(await left(), { sessions: gone, values: gone });
    });

    test('deleteSession ends the session of one token with its values', async () => {
      await inTransaction((trx) => deleteSession(trx, tokens['bob-portal-1']));
      const gone = without('bob-portal-1');
      assert.deepEqual(await left(), { sessions: gone, values: gone });
    });

    test("listUserSessions lists the user's live sessions of one kind, oldest first", async () => {
      const listed = await listUserSessions(t.store.db, 'ann', 'token');
      assert.deepEqual(listed.map((s) => s.id).sort(), [ids['ann-token-1'], ids['ann-token-2']].sort());
    });
  });
}
