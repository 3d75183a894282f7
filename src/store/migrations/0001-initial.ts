import { sql } from 'kysely';
import type { Migration } from 'kysely';
import { bigintType } from './dialect.ts';
import type { AnyDb, DialectName } from './dialect.ts';

/**
 * The first schema: provider orgs, catalogs and users, sessions, APIs, products and plans,
 * consumer orgs, portal users, apps and credentials, subscriptions, activity events and the
 * change feed.
 */
export function initial(dialect: DialectName): Migration {
  const bigint = bigintType(dialect);
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
