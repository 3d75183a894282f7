/** Sessions of every kind (portal and console cookies, management API tokens), kept as token hashes in the store. */
import type { Session, SessionKind } from '../store/schema.ts';
import { serverKey } from '../store/server-keys.ts';
import * as sessions from '../store/sessions.ts';
import type { NewSession } from '../store/sessions.ts';
import type { Store } from '../store/store.ts';

export class SessionService {
  private preSessionKeyRead?: Promise<Buffer>;

  constructor(private readonly store: Store) {}

  /** The installation's pre-session signing key: read from the store (created there once) on first use, then kept. */
  preSessionKey(): Promise<Buffer> {
    this.preSessionKeyRead ??= serverKey(this.store.db, 'pre-session').catch((error: unknown) => {
      // A store that did not answer is asked again by the next request.
      this.preSessionKeyRead = undefined;
      throw error;
    });
    return this.preSessionKeyRead;
  }

  /** A new session; its token is returned here only (the store keeps its hash). */
  create(input: { kind: SessionKind; userId: string; ttlMs: number }): Promise<NewSession> {
    return sessions.createSession(this.store.db, input);
  }

  /**
   * The live session for `token` of one of `kinds`, or undefined when unknown or expired; with
   * `idleMs`, also when idle that long (its activity is recorded, at most once a minute).
   */
  find(token: string, kinds: SessionKind[], idleMs?: number): Promise<Session | undefined> {
    return sessions.findSession(this.store.db, token, kinds, { idleMs });
  }

  /** Ends the session of `token` (sign-out), its values with it, in one transaction. */
  delete(token: string): Promise<void> {
    return this.store.transaction((trx) => sessions.deleteSession(trx, token));
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
  async deleteUserSessions(userId: string, kind: SessionKind): Promise<void> {
    await this.store.transaction((trx) => sessions.deleteUserSessions(trx, userId, { kinds: [kind] }));
  }
}
