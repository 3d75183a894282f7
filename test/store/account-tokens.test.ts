/**
 * A new password cancels the account's reset links, and a reset of a never-verified account
 * deletes the apps made before it in the same transaction as the password (recording the change
 * for the gateways): on SQLite and on the real PostgreSQL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resetLinkTtlMs } from '../../src/services/consumer/account-email.ts';
import { ConsumerServices } from '../../src/services/consumer-services.ts';
import { issueAccountToken, peekAccountToken } from '../../src/store/account-tokens.ts';
import * as consumers from '../../src/store/consumers.ts';
import { createCatalog, createOrg } from '../../src/store/orgs.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const password = 'store-pass-1';

for (const backend of storeBackends) {
  describe(`account tokens and takeover (${backend.name})`, () => {
    let t: TestStore;
    let services: ConsumerServices;
    let catalogId: string;

    before(async () => {
      t = await backend.open();
      services = new ConsumerServices(t.store);
      const org = await createOrg(t.store.db, { name: 'tokens-org', title: 'Tokens' });
      catalogId = (await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' })).id;
    });
    after(() => t?.dispose());

    test('a password change cancels the live reset link', async () => {
      const { user } = await services.signUp(catalogId, { email: 'change@example.org', password, verified: true });
      const link = await issueAccountToken(t.store.db, user.id, 'reset-password', resetLinkTtlMs);
      assert.equal(await peekAccountToken(t.store.db, link, 'reset-password'), user.id);
      await services.changePortalPassword(user.id, password, 'changed-pass-2', '127.0.0.1');
      assert.equal(await peekAccountToken(t.store.db, link, 'reset-password'), undefined);
    });

    test('a reset of a never-verified account deletes its apps and records an app-delete change', async () => {
      const { user, org } = await services.signUp(catalogId, { email: 'owner@example.org', password });
      const { app } = await services.createApp(org.id, { title: 'Made before' });
      const link = await issueAccountToken(t.store.db, user.id, 'reset-password', resetLinkTtlMs);
      await services.resetPassword(link, 'owner-pass-3');
      assert.deepEqual(await consumers.listApps(t.store.db, org.id), []);
      const recorded = await t.store.db
        .selectFrom('changes')
        .select(['kind', 'ref'])
        .where('kind', '=', 'app-delete')
        .execute();
      assert.deepEqual(recorded, [{ kind: 'app-delete', ref: app.id }]);
      assert.notEqual((await services.portalUser(user.id))?.email_verified_at, null);
    });
  });
}
