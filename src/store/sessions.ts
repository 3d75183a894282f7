/** Sessions of the console and the portal, and the CLI's API tokens; only token hashes are stored. */
import { sql } from 'kysely';
import type { Db } from './store.ts';
import { readIn } from './in-lists.ts';
import type { Session, SessionKind } from './schema.ts';
import { hashToken, newToken, now } from './secrets.ts';

export interface NewSession {
  /** The bearer token or cookie value; shown to its owner once, never stored. */
  token: string;
  csrfToken: string;
  session: Session;
}

export async function createSession(
  db: Db,
  input: { kind: SessionKind; userId: string; ttlMs: number },
): Promise<NewSession> {
  const token = newToken();
  const session: Session = {
    id: hashToken(token),
    kind: input.kind,
    user_id: input.userId,
    csrf_token: newToken(),
    created_at: now(),
    expires_at: Date.now() + input.ttlMs,
    last_seen: Date.now(),
  };
  await db.insertInto('sessions').values(session).execute();
  return { token, csrfToken: session.csrf_token, session };
}

/** Activity is recorded at most this often per session, so a signed-in page view is not a write. */
const lastSeenResolutionMs = 60_000;

/**
 * The live session for `token` of one of `kinds`, or undefined when unknown or expired. With
 * `idleMs`, a session without activity for longer is deleted and undefined too, and this request
 * is recorded as its activity when the last record is a minute old or more.
 */
export async function findSession(
  db: Db,
  token: string,
  kinds: SessionKind[],
  idle: { idleMs?: number; now?: number } = {},
): Promise<Session | undefined> {
  const at = idle.now ?? Date.now();
  const session = await db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', hashToken(token))
    .where('kind', 'in', kinds)
    .executeTakeFirst();
  if (session === undefined || session.expires_at < at) return undefined;
  if (idle.idleMs === undefined) return session;
  if (at - session.last_seen > idle.idleMs) {
    await deleteSession(db, token);
    return undefined;
  }
  if (at - session.last_seen < lastSeenResolutionMs) return session;
  // Conditional: of the requests (on any node) that find the record stale at once, one writes.
  await db
    .updateTable('sessions')
    .set({ last_seen: at })
    .where('id', '=', session.id)
    .where('last_seen', '<=', at - lastSeenResolutionMs)
    .execute();
  return { ...session, last_seen: at };
}

/**
 * Ends the session of `token`, its values with it. The session goes first (its values go with it
 * by the foreign key's cascade where it holds), so two statements: pass a transaction.
 */
export async function deleteSession(db: Db, token: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', hashToken(token)).execute();
  await db.deleteFrom('session_values').where('session_id', '=', hashToken(token)).execute();
}

/** Which of one user's sessions to end: those of `kinds`, narrowed by the other fields given. */
export interface UserSessionSelection {
  kinds: SessionKind[];
  /** Only the session whose stored id starts so: a token's public id (the whole id: that session). */
  idPrefix?: string;
  /** All but this session (the one asking). */
  keepId?: string;
}

/**
 * Ends the user's sessions that `which` selects, with their values; the number ended. One
 * statement decides which sessions end and a second deletes their values: pass a transaction.
 */
export async function deleteUserSessions(db: Db, userId: string, which: UserSessionSelection): Promise<number> {
  let sessions = db.deleteFrom('sessions').where('user_id', '=', userId).where('kind', 'in', which.kinds);
  const prefix = which.idPrefix;
  if (prefix !== undefined)
    sessions = sessions.where((eb) => eb(eb.fn('substr', ['id', sql.lit(1), sql.lit(prefix.length)]), '=', prefix));
  if (which.keepId !== undefined) sessions = sessions.where('id', '<>', which.keepId);
  const ended = (await sessions.returning('id').execute()).map((row) => row.id);
  await readIn(ended, (ids) => db.deleteFrom('session_values').where('session_id', 'in', ids).execute());
  return ended.length;
}

/** The user's live sessions of `kind`, oldest first (a provider user's list of API tokens). */
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

/** Ends every expired session and expired value; the number of sessions ended. Two statements: pass a transaction. */
export async function purgeExpiredSessions(db: Db): Promise<number> {
  const expired = db.selectFrom('sessions').select('id').where('expires_at', '<', Date.now());
  await db
    .deleteFrom('session_values')
    .where((eb) => eb.or([eb('expires_at', '<', Date.now()), eb('session_id', 'in', expired)]))
    .execute();
  const result = await db.deleteFrom('sessions').where('expires_at', '<', Date.now()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Keeps `value` under `name` for the session until `expiresAt` (replacing what was there). */
export async function putSessionValue(
  db: Db,
  sessionId: string,
  name: string,
  value: string,
  expiresAt: number,
): Promise<void> {
  await db
    .insertInto('session_values')
    .values({ session_id: sessionId, name, value, expires_at: expiresAt })
    .onConflict((conflict) => conflict.columns(['session_id', 'name']).doUpdateSet({ value, expires_at: expiresAt }))
    .execute();
}

/** The session's value under `name`, deleted as it is read (a flash is shown once); undefined when expired. */
export async function takeSessionValue(db: Db, sessionId: string, name: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('session_values')
    .where('session_id', '=', sessionId)
    .where('name', '=', name)
    .returning(['value', 'expires_at'])
    .executeTakeFirst();
  return row && row.expires_at >= Date.now() ? row.value : undefined;
}

/** The session's value under `name` without removing it; undefined when absent or expired. */
export async function readSessionValue(db: Db, sessionId: string, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('session_values')
    .select(['value', 'expires_at'])
    .where('session_id', '=', sessionId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row && row.expires_at >= Date.now() ? row.value : undefined;
}
