/** One-time links of portal accounts (email verification, password reset), kept as SHA-256 hashes. */
import type { AccountTokenPurpose } from './schema.ts';
import type { Db } from './store.ts';
import { hashToken, newToken, now } from './secrets.ts';

/**
 * A new 256-bit token for `userId`; it replaces the user's earlier tokens of the same purpose,
 * so only the latest link works. The token itself is returned here only.
 */
export async function issueAccountToken(
  db: Db,
  userId: string,
  purpose: AccountTokenPurpose,
  ttlMs: number,
): Promise<string> {
  const token = newToken();
  await db.deleteFrom('account_tokens').where('user_id', '=', userId).where('purpose', '=', purpose).execute();
  await db
    .insertInto('account_tokens')
    .values({
      token_hash: hashToken(token),
      user_id: userId,
      purpose,
      expires_at: Date.now() + ttlMs,
      created_at: now(),
    })
    .execute();
  return token;
}

/** The user a live token of `purpose` belongs to, without using it up; undefined when unknown or expired. */
type Purpose = AccountTokenPurpose;

export async function peekAccountToken(db: Db, token: string, purpose: Purpose): Promise<string | undefined> {
  const row = await db
    .selectFrom('account_tokens')
    .select(['user_id', 'expires_at'])
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  return row && row.expires_at >= Date.now() ? row.user_id : undefined;
}

/**
 * Uses up a token: deletes it and answers its user when it was live. The delete is the check,
 * so two requests racing with one link cannot both succeed.
 */
export async function consumeAccountToken(db: Db, token: string, purpose: Purpose): Promise<string | undefined> {
  const row = await db
    .deleteFrom('account_tokens')
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .returning(['user_id', 'expires_at'])
    .executeTakeFirst();
  return row && row.expires_at >= Date.now() ? row.user_id : undefined;
}

/** Forgets every token of the user for `purpose` (after a reset, the other reset links die too). */
export async function deleteAccountTokens(db: Db, userId: string, purpose: AccountTokenPurpose): Promise<void> {
  await db.deleteFrom('account_tokens').where('user_id', '=', userId).where('purpose', '=', purpose).execute();
}

export async function purgeExpiredAccountTokens(db: Db): Promise<number> {
  const result = await db.deleteFrom('account_tokens').where('expires_at', '<', Date.now()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function markEmailVerified(db: Db, userId: string): Promise<void> {
  await db
    .updateTable('portal_users')
    .set({ email_verified_at: now() })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .execute();
}
