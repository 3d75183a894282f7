import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * `oauth_refresh_tokens.public_client`: 1 when the grant was issued to a public client (no
 * secret; PKCE bound the code), 0 when the client authenticated with its secret. A refresh
 * without client authentication is served only for 1 (RFC 6749 §6: a confidential client
 * authenticates on refresh). Rows issued before this migration cannot tell which they were and
 * read as confidential (0, fail-closed): a public client holding such a token signs in again.
 */
export function refreshTokenPublicClient(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .alterTable('oauth_refresh_tokens')
        .addColumn('public_client', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
