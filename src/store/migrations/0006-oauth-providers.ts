import type { Migration } from 'kysely';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * The native OAuth provider (issue 14): providers of an org and the catalogs that enable them,
 * their signing keys, one-time authorization codes and refresh tokens (SHA-256 hashes only),
 * revoked token ids until they expire, and each app's registered redirect URIs.
 */
export function oauthProviders(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('oauth_providers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('provider_orgs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('configuration', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('oauth_providers_org_name', ['org_id', 'name'])
        .execute();
      await db.schema
        .createTable('catalog_oauth_providers')
        .addColumn('catalog_id', 'text', (c) => c.notNull().references('catalogs.id'))
        .addColumn('provider_id', 'text', (c) => c.notNull().references('oauth_providers.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('catalog_oauth_providers_pk', ['catalog_id', 'provider_id'])
        .execute();
      await db.schema
        .createTable('oauth_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('provider_id', 'text', (c) => c.notNull().references('oauth_providers.id').onDelete('cascade'))
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', bigint, (c) => c.notNull())
        .addColumn('retired_at', bigint)
        .execute();
      await db.schema
        .createTable('oauth_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('grant_id', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('catalog_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('challenge', 'text')
        .addColumn('challenge_method', 'text')
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('oauth_refresh_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('grant_id', 'text', (c) => c.notNull())
        .addColumn('provider_id', 'text', (c) => c.notNull())
        .addColumn('catalog_id', 'text', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('oauth_refresh_tokens_grant').on('oauth_refresh_tokens').column('grant_id').execute();
      await db.schema
        .createTable('oauth_revocations')
        .addColumn('token_id', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('apps')
        .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
    },
  };
}
