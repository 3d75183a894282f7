/**
 * A provider user's sessions as a list: the management API's bearer tokens (kind `token`) and
 * console sessions (kind `provider`). A session's id is its token's SHA-256 (sessions.ts).
 */
import type { Db } from './store.ts';
import type { Session, SessionKind } from './schema.ts';

/** The user's live sessions of `kind`, oldest first. */
export function listUserSessions(db: Db, userId: string, kind: SessionKind): Promise<Session[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('expires_at', '>=', Date.now())
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Ends one session of the user by its stored id; false when the user has no such session. */
export async function deleteUserSession(db: Db, userId: string, sessionId: string): Promise<boolean> {
  const owned = db.selectFrom('sessions').select('id').where('id', '=', sessionId).where('user_id', '=', userId);
  await db.deleteFrom('session_values').where('session_id', 'in', owned).execute();
  const result = await db
    .deleteFrom('sessions')
    .where('id', '=', sessionId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Ends every session of the user of the given kinds except `keepId` (the one asking, if any). */
export async function deleteOtherUserSessions(
  db: Db,
  userId: string,
  kinds: SessionKind[],
  keepId: string | undefined,
): Promise<void> {
  const others = () => {
    let query = db.selectFrom('sessions').select('id').where('user_id', '=', userId).where('kind', 'in', kinds);
    if (keepId !== undefined) query = query.where('id', '<>', keepId);
    return query;
  };
  await db.deleteFrom('session_values').where('session_id', 'in', others()).execute();
  await db.deleteFrom('sessions').where('id', 'in', others()).execute();
}
