/**
 * Two owners demoting each other at the same moment, on SQLite and PostgreSQL: role changes of
 * one organization run one after the other, so one wins and the organization keeps an owner.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
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
