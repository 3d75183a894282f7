/**
 * Two owners demoting each other at the same moment, on SQLite and PostgreSQL: role changes of
 * one organization run one after the other, so one wins and the organization keeps an owner.
 * And two users added with one name at the same moment: one is added, the other gets the
 * ordinary conflict, not the database's error.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PorticoError } from '../../src/errors.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { storeBackends } from '../helpers/stores.ts';

describe('the last owner under concurrent role changes', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: of two owners demoting each other at once, one is refused`, async () => {
      const t = await backend.open();
      try {
        const services = new ProviderServices(t.store);
        const { orgId } = await services.ensureOrg('acme');
        const password = 'owner-pass-1234';
        for (let round = 0; round < 5; round++) {
          const a = await services.addProviderUser(orgId, {
            username: `a${round}`,
            email: '',
            password,
            role: 'owner',
          });
          const b = await services.addProviderUser(orgId, {
            username: `b${round}`,
            email: '',
            password,
            role: 'owner',
          });
          const others = (await services.listProviderUsers(orgId)).filter((u) => u.id !== a.id && u.id !== b.id);
          for (const other of others.filter((u) => u.role === 'owner'))
            await services.changeProviderUserRole(a, other.username, 'viewer');
          const results = await Promise.allSettled([
            services.changeProviderUserRole(a, b.username, 'viewer'),
            services.changeProviderUserRole(b, a.username, 'viewer'),
          ]);
          assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
          const owners = (await services.listProviderUsers(orgId)).filter((u) => u.role === 'owner');
          assert.equal(owners.length, 1, `round ${round}`);
        }
      } finally {
        await t.dispose();
      }
    });
  }
});

describe('one user name added twice at once', () => {
  for (const backend of storeBackends) {
    test(`${backend.name}: one add wins, the other is the conflict a taken name always gets`, async () => {
      const t = await backend.open();
      try {
        const services = new ProviderServices(t.store);
        const { orgId } = await services.ensureOrg('acme');
        const { orgId: otherOrg } = await services.ensureOrg('globex');
        // Both pass the name check before either inserts (on PostgreSQL, most rounds): the second
        // insert meets the unique index.
        for (let round = 0; round < 10; round++) {
          const input = { username: `same-name-${round}`, email: '', password: 'same-pass-1234' };
          const results = await Promise.allSettled([
            services.addProviderUser(orgId, input),
            services.addProviderUser(otherOrg, input),
          ]);
          assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
          const refusal = results.find((r) => r.status === 'rejected')!.reason as unknown;
          assert.ok(refusal instanceof PorticoError, `round ${round}: a database error leaked: ${String(refusal)}`);
          assert.equal(refusal.code, 'MGMT_CONFLICT');
          assert.equal(refusal.params.field, 'username');
          assert.match(String(refusal.params.reason), /same-name-\d+ is not available/);
        }
      } finally {
        await t.dispose();
      }
    });
  }
});
