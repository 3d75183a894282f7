/**
 * Versioned migrations, run at start by `openStore` (Kysely's Migrator keeps the applied list
 * in `kysely_migration`). One file per migration, named as recorded. Never edit a released
 * migration: add the next one.
 */
import type { MigrationProvider } from 'kysely';
import { initial } from './0001-initial.ts';
import { analyticsIndexes } from './0002-analytics-indexes.ts';
import { analyticsRollup } from './0003-analytics-rollup.ts';
import { dropRedundantEventIndex } from './0004-drop-redundant-event-index.ts';
import { userRegistries } from './0005-user-registries.ts';
import { oauthProviders } from './0006-oauth-providers.ts';
import { analyticsIdsAndSessionValues } from './0007-analytics-ids-session-values.ts';
import { accountEmail } from './0008-account-email.ts';
import { activityScopes } from './0009-activity-scopes.ts';
import { changeRefs } from './0010-change-refs.ts';
import { subscriptionIndexes } from './0011-subscription-indexes.ts';
import { dropSubscriptionStateIndex } from './0012-drop-subscription-state-index.ts';
import { refreshTokenPublicClient } from './0013-refresh-token-public-client.ts';
import { activityCallKeyAndPlanCalls } from './0014-activity-call-key-plan-calls.ts';
import { codeRedirectUriNamed } from './0015-code-redirect-uri-named.ts';
import { consumerOrgProviderCreated } from './0016-consumer-org-provider-created.ts';
import { serverKeysAndSessionActivity } from './0017-server-keys-session-activity.ts';
import { providerUserRoles } from './0018-provider-user-roles.ts';
import type { DialectName } from './dialect.ts';

export type { DialectName } from './dialect.ts';

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
        '0009-activity-scopes': activityScopes(dialect),
        '0010-change-refs': changeRefs(),
        '0011-subscription-indexes': subscriptionIndexes(),
        '0012-drop-subscription-state-index': dropSubscriptionStateIndex(),
        '0013-refresh-token-public-client': refreshTokenPublicClient(),
        '0014-activity-call-key-plan-calls': activityCallKeyAndPlanCalls(dialect),
        '0015-code-redirect-uri-named': codeRedirectUriNamed(),
        '0016-consumer-org-provider-created': consumerOrgProviderCreated(),
        '0017-server-keys-session-activity': serverKeysAndSessionActivity(dialect),
        '0018-provider-user-roles': providerUserRoles(),
      };
    },
  };
}
