/**
 * Versioned migrations, run at start by `openStore` (Kysely's Migrator keeps the applied list
 * in `kysely_migration`). Never edit a released migration: add the next one.
 */
import { sql } from 'kysely';
import type { CreateTableBuilder, Kysely, Migration, MigrationProvider } from 'kysely';
import { latencyBucketCount, rebuildRollup, rollupDimensions } from './rollup.ts';

export type DialectName = 'sqlite' | 'postgres';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run against the schema as it was, not as typed now
type AnyDb = Kysely<any>;

function initial(dialect: DialectName): Migration {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('provider_orgs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('catalogs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('provider_orgs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('catalogs_org_name', ['org_id', 'name'])
        .execute();
      await db.schema
        .createTable('provider_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('provider_orgs.id'))
        .addColumn('username', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('apis')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('provider_orgs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('base_path', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('attachments', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('apis_org_name_version', ['org_id', 'name', 'version'])
        .execute();
      await db.schema
        .createTable('products')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('catalog_id', 'text', (c) => c.notNull().references('catalogs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('view_type', 'text', (c) => c.notNull())
        .addColumn('subscribe_type', 'text', (c) => c.notNull())
        .addColumn('view_orgs', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('subscribe_orgs', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('document', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('products_catalog_name_version', ['catalog_id', 'name', 'version'])
        .execute();
      await db.schema
        .createTable('product_apis')
        .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('cascade'))
        .addColumn('api_id', 'text', (c) => c.notNull().references('apis.id'))
        .addColumn('api_key', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('product_apis_pk', ['product_id', 'api_id'])
        .execute();
      await db.schema
        .createTable('plans')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('product_id', 'text', (c) => c.notNull().references('products.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('approval', 'integer', (c) => c.notNull())
        .addColumn('rate_limits', 'text', (c) => c.notNull())
        .addColumn('burst_limits', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addUniqueConstraint('plans_product_name', ['product_id', 'name'])
        .execute();
      await db.schema
        .createTable('consumer_orgs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('catalog_id', 'text', (c) => c.notNull().references('catalogs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('consumer_orgs_catalog_name', ['catalog_id', 'name'])
        .execute();
      await db.schema
        .createTable('portal_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('catalog_id', 'text', (c) => c.notNull().references('catalogs.id'))
        .addColumn('consumer_org_id', 'text', (c) => c.notNull().references('consumer_orgs.id'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('portal_users_catalog_email', ['catalog_id', 'email'])
        .execute();
      await db.schema
        .createTable('apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('consumer_org_id', 'text', (c) => c.notNull().references('consumer_orgs.id'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('app_credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('client_id', 'text', (c) => c.notNull().unique())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('subscriptions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('product_id', 'text', (c) => c.notNull().references('products.id'))
        .addColumn('plan_id', 'text', (c) => c.notNull().references('plans.id'))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('subscriptions_app').on('subscriptions').column('app_id').execute();
      await db.schema.createIndex('subscriptions_state').on('subscriptions').column('state').execute();

      const events = db.schema.createTable('activity_events');
      await (
        dialect === 'postgres'
          ? events.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : events.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('ts', bigint, (c) => c.notNull())
        .addColumn('tx_id', 'text', (c) => c.notNull())
        .addColumn('org_name', 'text', (c) => c.notNull())
        .addColumn('catalog_name', 'text', (c) => c.notNull())
        .addColumn('api_name', 'text', (c) => c.notNull())
        .addColumn('api_version', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('verb', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'real', (c) => c.notNull())
        .addColumn('backend_ms', 'real', (c) => c.notNull())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('app_id', 'text', (c) => c.notNull())
        .addColumn('app_name', 'text', (c) => c.notNull())
        .addColumn('consumer_org_name', 'text', (c) => c.notNull())
        .addColumn('product_name', 'text', (c) => c.notNull())
        .addColumn('plan_name', 'text', (c) => c.notNull())
        .addColumn('error_name', 'text', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        .addColumn('request_headers', 'text')
        .addColumn('request_body', 'text')
        .addColumn('response_headers', 'text')
        .addColumn('response_body', 'text')
        .execute();
      await db.schema.createIndex('activity_events_ts').on('activity_events').column('ts').execute();
      await db.schema.createIndex('activity_events_api_ts').on('activity_events').columns(['api_name', 'ts']).execute();

      const changes = db.schema.createTable('changes');
      await (
        dialect === 'postgres'
          ? changes.addColumn('id', 'bigserial', (c) => c.primaryKey())
          : changes.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('ts', bigint, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .execute();
      await sql`select 1`.execute(db);
    },
  };
}

/** Indexes for the console's analytics: every query filters by org and catalog over a time range. */
function analyticsIndexes(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createIndex('activity_events_scope_ts')
        .on('activity_events')
        .columns(['org_name', 'catalog_name', 'ts'])
        .execute();
      await db.schema
        .createIndex('activity_events_scope_api_ts')
        .on('activity_events')
        .columns(['org_name', 'catalog_name', 'api_name', 'ts'])
        .execute();
    },
  };
}

/**
 * Drops `activity_events_api_ts`: every analytics query filters by org and catalog, so
 * `activity_events_scope_api_ts` serves what it served, and each activity event paid for one
 * more index insert on every call.
 */
function dropRedundantEventIndex(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.dropIndex('activity_events_api_ts').ifExists().execute();
    },
  };
}

/** Hourly analytics rollups (see analytics.ts), filled from the events already stored. */
function analyticsRollup(dialect: DialectName): Migration {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: AnyDb) {
      let table = db.schema
        .createTable('activity_rollup')
        .addColumn('bucket_ts', bigint, (c) => c.notNull())
        .addColumn('org_name', 'text', (c) => c.notNull())
        .addColumn('catalog_name', 'text', (c) => c.notNull())
        .addColumn('api_name', 'text', (c) => c.notNull())
        .addColumn('operation_id', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('app_name', 'text', (c) => c.notNull())
        .addColumn('plan_name', 'text', (c) => c.notNull())
        .addColumn('product_name', 'text', (c) => c.notNull())
        .addColumn('consumer_org_name', 'text', (c) => c.notNull())
        .addColumn('calls', bigint, (c) => c.notNull())
        .addColumn('latency_sum', 'real', (c) => c.notNull());
      for (let i = 0; i < latencyBucketCount; i++)
        table = table.addColumn(`h${i}`, bigint, (c) => c.notNull().defaultTo(0));
      await table
        .addUniqueConstraint('activity_rollup_key', [
          'bucket_ts',
          'org_name',
          'catalog_name',
          'api_name',
          'operation_id',
          'status',
          'app_name',
          'plan_name',
          'product_name',
          'consumer_org_name',
        ])
        .execute();
      await db.schema
        .createIndex('activity_rollup_scope')
        .on('activity_rollup')
        .columns(['org_name', 'catalog_name', 'bucket_ts'])
        .execute();
      await rebuildRollup(db, [
        'org_name',
        'catalog_name',
        'api_name',
        'operation_id',
        'status',
        'app_name',
        'plan_name',
        'product_name',
        'consumer_org_name',
      ]);
    },
  };
}

/**
 * User registries (issue 13) of a provider org, the catalogs that enable them for APIs, and the
 * authenticated user of each activity event.
 */
function userRegistries(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('user_registries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('org_id', 'text', (c) => c.notNull().references('provider_orgs.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('registry_type', 'text', (c) => c.notNull())
        .addColumn('configuration', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('user_registries_org_name', ['org_id', 'name'])
        .execute();
      await db.schema
        .createTable('catalog_user_registries')
        .addColumn('catalog_id', 'text', (c) => c.notNull().references('catalogs.id'))
        .addColumn('registry_id', 'text', (c) => c.notNull().references('user_registries.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('catalog_user_registries_pk', ['catalog_id', 'registry_id'])
        .execute();
      await db.schema
        .alterTable('activity_events')
        .addColumn('user_name', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
    },
  };
}

/**
 * The native OAuth provider (issue 14): providers of an org and the catalogs that enable them,
 * their signing keys, one-time authorization codes and refresh tokens (SHA-256 hashes only),
 * revoked token ids until they expire, and each app's registered redirect URIs.
 */
function oauthProviders(dialect: DialectName): Migration {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
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

/**
 * Issue 16: analytics keyed by ids (app, plan, subscription, consumer org) instead of names that
 * repeat across consumer orgs, and short-lived session values (flash, the subscribe wizard).
 * Events already stored get their ids from the apps and subscriptions that still exist; the
 * rollups are rebuilt with the new key (SQLite cannot change a table's unique constraint).
 */
function analyticsIdsAndSessionValues(dialect: DialectName): Migration {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: AnyDb) {
      for (const column of ['consumer_org_id', 'subscription_id', 'plan_id']) {
        await db.schema
          .alterTable('activity_events')
          .addColumn(column, 'text', (c) => c.notNull().defaultTo(''))
          .execute();
      }
      await sql`update activity_events set consumer_org_id = coalesce(
        (select apps.consumer_org_id from apps where apps.id = activity_events.app_id), '') where app_id <> ''`.execute(
        db,
      );
      await sql`update activity_events set subscription_id = coalesce((select s.id from subscriptions s
          join plans p on p.id = s.plan_id join products r on r.id = s.product_id
          where s.app_id = activity_events.app_id and p.name = activity_events.plan_name
            and r.name = activity_events.product_name order by s.created_at desc limit 1), '')
        where app_id <> '' and plan_name <> ''`.execute(db);
      await sql`update activity_events set plan_id = coalesce(
        (select s.plan_id from subscriptions s where s.id = activity_events.subscription_id), '')
        where subscription_id <> ''`.execute(db);
      await db.schema.dropTable('activity_rollup').execute();
      let table: CreateTableBuilder<'activity_rollup', string> = db.schema
        .createTable('activity_rollup')
        .addColumn('bucket_ts', bigint, (c) => c.notNull());
      for (const column of rollupDimensions) {
        table = table.addColumn(column, column === 'status' ? 'integer' : 'text', (c) => c.notNull());
      }
      table = table.addColumn('calls', bigint, (c) => c.notNull()).addColumn('latency_sum', 'real', (c) => c.notNull());
      for (let i = 0; i < latencyBucketCount; i++)
        table = table.addColumn(`h${i}`, bigint, (c) => c.notNull().defaultTo(0));
      await table.addUniqueConstraint('activity_rollup_key', ['bucket_ts', ...rollupDimensions]).execute();
      await db.schema
        .createIndex('activity_rollup_scope')
        .on('activity_rollup')
        .columns(['org_name', 'catalog_name', 'bucket_ts'])
        .execute();
      await db.schema
        .createIndex('activity_rollup_subscription')
        .on('activity_rollup')
        .columns(['subscription_id', 'bucket_ts'])
        .execute();
      await rebuildRollup(db);
      await db.schema
        .createTable('session_values')
        .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('expires_at', bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint('session_values_pk', ['session_id', 'name'])
        .execute();
    },
  };
}

/**
 * Issue 16: portal accounts prove their email address, and one-time links (verification,
 * password reset) are stored as token hashes. Accounts that exist already were let in before
 * verification existed; they count as verified rather than losing their products overnight.
 */
function accountEmail(dialect: DialectName): Migration {
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
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

/** The migrations for a dialect, in order. */
export function migrationProvider(dialect: DialectName): MigrationProvider {
  return {
    async getMigrations() {
      return {
        '0001-initial': initial(dialect),
        '0002-analytics-indexes': analyticsIndexes(),
        '0003-analytics-rollup': analyticsRollup(dialect),
        '0004-drop-redundant-event-index': dropRedundantEventIndex(),
        '0005-user-registries': userRegistries(),
        '0006-oauth-providers': oauthProviders(dialect),
        '0007-analytics-ids-session-values': analyticsIdsAndSessionValues(dialect),
        '0008-account-email': accountEmail(dialect),
      };
    },
  };
}
