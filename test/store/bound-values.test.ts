/**
 * Statements that read or delete "these ids" bind one value per id, and the databases bound them:
 * SQLite takes at most 32,766 values in a statement, PostgreSQL 65,535. A platform past that many
 * published products (every tenant's together: the gateway's snapshot read them in one list) or
 * a product of that many APIs must still work: on each backend, 70,000 of each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findApisByIds, findApisByNames } from '../../src/store/apis.ts';
import { createCatalog, createOrg } from '../../src/store/orgs.ts';
import { upsertProduct } from '../../src/store/products.ts';
import { loadSnapshotData } from '../../src/store/snapshot-data.ts';
import { newId } from '../../src/store/secrets.ts';
import type { Db } from '../../src/store/store.ts';
import { storeBackends } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const count = 70_000;
const stamp = '2026-11-30T00:00:00.000Z';

/** Inserts rows in statements of 500 (each statement's own values stay under both bounds). */
async function insertMany(db: Db, table: 'apis' | 'products', rows: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 500) as never)
      .execute();
  }
}

for (const backend of storeBackends) {
  describe(`${backend.name}: ${count.toLocaleString('en')} values where a statement binds one per value`, () => {
    let t: TestStore;
    let orgId: string;
    let apiIds: string[];

    before(async () => {
      t = await backend.open();
      const db = t.store.db;
      orgId = (await createOrg(db, { name: 'many', title: 'Many' })).id;
      const catalog = await createCatalog(db, { orgId, name: 'sandbox', title: 'Sandbox' });
      const apis = Array.from({ length: count }, (_, i) => ({
        id: newId(),
        org_id: orgId,
        name: `api-${i}`,
        version: `1.0.${i}`,
        title: `API ${i}`,
        base_path: `/api-${i}`,
        state: 'offline',
        document: '{}',
        attachments: '{}',
        created_at: stamp,
        updated_at: stamp,
      }));
      apiIds = apis.map((api) => api.id);
      await insertMany(db, 'apis', apis);
      const products = Array.from({ length: count }, (_, i) => ({
        id: newId(),
        catalog_id: catalog.id,
        name: `product-${i}`,
        version: '1.0.0',
        title: `Product ${i}`,
        state: 'published',
        view_type: 'public',
        subscribe_type: 'authenticated',
        view_orgs: '[]',
        subscribe_orgs: '[]',
        document: '{}',
        created_at: stamp,
        updated_at: stamp,
      }));
      await insertMany(db, 'products', products);
    });

    after(async () => {
      await t?.dispose();
    });

    test('the APIs of 70,000 ids, and of 70,000 names and versions', async () => {
      const byId = await findApisByIds(t.store.db, [...apiIds, 'no-such-id']);
      assert.equal(byId.size, count);
      const refs = Array.from({ length: count }, (_, i) => ({ name: `api-${i}`, version: `1.0.${i}` }));
      const byName = await findApisByNames(t.store.db, orgId, [...refs, { name: 'api-1', version: '9.9.9' }]);
      assert.equal(byName.length, count + 1);
      assert.equal(byName[count - 1]?.id, apiIds[count - 1]);
      assert.equal(byName[count], undefined);
    });

    test('a product of 70,000 APIs', async () => {
      const db = t.store.db;
      const catalogId = (await db.selectFrom('catalogs').select('id').executeTakeFirstOrThrow()).id;
      const { product } = await db.transaction().execute((trx) =>
        upsertProduct(trx, {
          catalogId,
          name: 'everything',
          version: '1.0.0',
          title: 'Everything',
          state: 'staged',
          viewType: 'public',
          subscribeType: 'authenticated',
          viewOrgs: [],
          subscribeOrgs: [],
          document: {},
          plans: [],
          apis: apiIds.map((apiId, i) => ({ apiId, key: `api-${i}` })),
        }),
      );
      const links = await db.selectFrom('product_apis').select('api_id').where('product_id', '=', product.id).execute();
      assert.equal(links.length, count);
      await db.deleteFrom('product_apis').where('product_id', '=', product.id).execute();
      await db.deleteFrom('products').where('id', '=', product.id).execute();
    });

    test('a gateway snapshot of 70,000 published products', async () => {
      const data = await loadSnapshotData(t.store.db);
      assert.equal(data.products.length, count);
      assert.deepEqual(data.plans, []);
    });
  });
}
