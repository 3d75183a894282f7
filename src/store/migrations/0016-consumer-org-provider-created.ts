import type { Migration } from 'kysely';
import type { AnyDb } from './dialect.ts';

/**
 * `consumer_orgs.provider_created`: 1 for an organization a provider created (by the name its
 * products' custom visibility lists), 0 for one a visitor registered on the portal. Only the
 * first kind matches a custom visibility list: a self-registered organization that took a name
 * before a product listed it must not receive what the product was meant to show one partner.
 * Organizations created before this migration cannot tell which they were and keep matching (1),
 * as they did; docs/portal.md says how to check them after the upgrade.
 */
export function consumerOrgProviderCreated(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .alterTable('consumer_orgs')
        .addColumn('provider_created', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
    },
  };
}
