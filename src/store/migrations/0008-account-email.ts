import { sql } from 'kysely';
import type { Migration } from 'kysely';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * Issue 16: portal accounts prove their email address, and one-time links (verification,
 * password reset) are stored as token hashes. Accounts that exist already were let in before
 * verification existed; they count as verified rather than losing their products overnight.
 */
export function accountEmail(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('portal_users').addColumn('email_verified_at', 'text').execute();
      await sql`update portal_users set email_verified_at = created_at`.execute(db);
      await db.schema
        .createTable('account_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('portal_users.id').onDelete('cascade'))
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('account_tokens_user').on('account_tokens').columns(['user_id', 'purpose']).execute();
    },
  };
}
