import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * `oauth_codes.redirect_uri_named`: 1 when the authorization request named its `redirect_uri`,
 * 0 when it left it out (the client's one registered URI). RFC 6749 §4.1.3: only in the first
 * case must the token request repeat it. Codes issued before this migration read as named (1),
 * the stricter rule; codes live minutes (the provider's code TTL).
 */
export function codeRedirectUriNamed(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .alterTable('oauth_codes')
        .addColumn('redirect_uri_named', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
  };
}
