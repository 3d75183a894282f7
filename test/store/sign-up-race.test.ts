/**
 * Sign-ups that meet at the same moment, on SQLite and on the real PostgreSQL: both pass the
 * look-ups before either inserts, so the unique indexes decide. One address signed up twice
 * gives one account and the ordinary conflict; two addresses whose organizations take the same
 * name both get an account, the second organization under another name.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PorticoError } from '../../src/errors.ts';
import { ConsumerServices } from '../../src/services/consumer-services.ts';
import * as consumers from '../../src/store/consumers.ts';
import { createCatalog, createOrg } from '../../src/store/orgs.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const password = 'race-pass-12';

for (const backend of storeBackends) {
  describe(`sign-ups at the same moment (${backend.name})`, () => {
    let t: TestStore;
    let services: ConsumerServices;
    let catalogId: string;

    before(async () => {
      t = await backend.open();
      services = new ConsumerServices(t.store);
      const org = await createOrg(t.store.db, { name: 'race-org', title: 'Race' });
      catalogId = (await createCatalog(t.store.db, { orgId: org.id, name: 'sandbox', title: 'Sandbox' })).id;
    });
    after(() => t?.dispose());

    test('one address twice: one account, and the conflict a taken address always gets', async () => {
      // Both pass the address look-up before either inserts (on PostgreSQL, most rounds).
      for (let round = 0; round < 10; round++) {
        const email = `twice-${round}@example.org`;
        const results = await Promise.allSettled([
          services.signUp(catalogId, { email, password, orgTitle: `Twice ${round} One` }),
          services.signUp(catalogId, { email, password, orgTitle: `Twice ${round} Two` }),
        ]);
        assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected'], `round ${round}`);
        const refusal = results.find((r) => r.status === 'rejected')!.reason as unknown;
        assert.ok(refusal instanceof PorticoError, `round ${round}: a database error leaked: ${String(refusal)}`);
        assert.equal(refusal.code, 'MGMT_CONFLICT');
        assert.equal(refusal.params.field, 'email');
        const titles = (await consumers.listConsumerOrgs(t.store.db, catalogId)).map((o) => o.title);
        assert.equal(titles.filter((title) => title.startsWith(`Twice ${round} `)).length, 1, 'no organization left');
      }
    });

    test('two addresses, one organization name: both accounts, two organizations', async () => {
      for (let round = 0; round < 10; round++) {
        const orgTitle = `Same Shop ${round}`;
        const results = await Promise.all([
          services.signUp(catalogId, { email: `first-${round}@example.org`, password, orgTitle }),
          services.signUp(catalogId, { email: `second-${round}@example.org`, password, orgTitle }),
        ]);
        const orgNames = results.map((r) => r.org.name).sort();
        assert.deepEqual(orgNames, [`same-shop-${round}`, `same-shop-${round}-2`], `round ${round}`);
      }
    });
  });
}
