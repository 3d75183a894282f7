/** Sessions of every kind (portal and console cookies, management API tokens), kept as token hashes in the store. */
import type { Session, SessionKind } from '../store/schema.ts';
import * as sessions from '../store/sessions.ts';
import type { NewSession } from '../store/sessions.ts';
import type { Store } from '../store/store.ts';

export class SessionService {
  constructor(private readonly store: Store) {}

  /** A new session; its token is returned here only (the store keeps its hash). */
  create(input: { kind: SessionKind; userId: string; ttlMs: number }): Promise<NewSession> {
    return sessions.createSession(this.store.db, input);
  }

  /** The live session for `token` of one of `kinds`, or undefined when unknown or expired. */
  find(token: string, kinds: SessionKind[]): Promise<Session | undefined> {
    return sessions.findSession(this.store.db, token, kinds);
  }

  delete(token: string): Promise<void> {
    return sessions.deleteSession(this.store.db, token);
  }

  /** Keeps a short-lived value in the session (a secret to show once, the subscribe wizard's place). */
  putValue(session: Session, name: string, value: string, ttlMs: number): Promise<void> {
    return sessions.putSessionValue(
      this.store.db,
      session.id,
      name,
      value,
      Math.min(Date.now() + ttlMs, session.expires_at),
    );
  }

  /** Reads and removes a session value (undefined when absent or expired). */
  takeValue(session: Session, name: string): Promise<string | undefined> {
    return sessions.takeSessionValue(this.store.db, session.id, name);
  }

  /** Reads a session value and leaves it in place. */
  readValue(session: Session, name: string): Promise<string | undefined> {
    return sessions.readSessionValue(this.store.db, session.id, name);
  }

  /** Ends every session of one kind of a user (after a password change, say). */
  deleteUserSessions(userId: string, kind: SessionKind): Promise<void> {
    return sessions.deleteUserSessions(this.store.db, userId, kind);
  }
}
