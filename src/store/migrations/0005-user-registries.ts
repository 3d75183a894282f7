import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * User registries (issue 13) of a provider org, the catalogs that enable them for APIs, and the
 * authenticated user of each activity event.
 */
export function userRegistries(): Migration {
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
