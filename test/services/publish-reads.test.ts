/**
 * Publishing a product reads its APIs' rows in one statement per check run, not once per API
 * per rule: the checks before the catalog's lock read only what decides a no-op, and the rules
 * (base paths, security, named registries and providers, plan limits) run once, under the lock.
 * The statements are counted through a second Kysely on the store's own SQLite handle, with a
 * query log; nothing is mocked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely } from 'kysely';
import { ProviderServices } from '../../src/services/provider-services.ts';
import type { Database } from '../../src/store/schema.ts';
import { ImmediateSqliteDialect } from '../../src/store/sqlite-dialect.ts';
import type { Store } from '../../src/store/store.ts';
import { clientIdScheme, secApi } from '../helpers/security-api.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const count = 20;
const names = Array.from({ length: count }, (_, i) => `api${String(i).padStart(2, '0')}`);

function apiDocument(name: string): Record<string, unknown> {
  const document = secApi({ schemes: { id: clientIdScheme }, security: [{ id: [] }] });
  Object.assign(document, { basePath: `/${name}` });
  Object.assign(document.info as object, { 'x-ibm-name': name, title: name });
  return document;
}

const product = (title: string) =>
  `product: 1.0.0\ninfo: { name: bundle, title: ${title}, version: 1.0.0 }\nplans:\n  default: { title: Default }\n` +
  `apis:\n${names.map((name) => `  ${name}: { name: '${name}:1.0.0' }\n`).join('')}`;

describe(`a publish of a product with ${count} APIs`, () => {
  let testStore: TestStore;
  let services: ProviderServices;
  let orgId: string;
  const statements: string[] = [];

  /** The SELECT statements on the `apis` table that `work` runs. */
  async function apiSelects(work: () => Promise<unknown>): Promise<number> {
    statements.length = 0;
    await work();
    return statements.filter((sql) => /^select\b/i.test(sql) && /(from|join) "apis"/i.test(sql)).length;
  }

  before(async () => {
    testStore = await sqliteTestStore();
    const base = testStore.store;
    // The same database handle, behind a Kysely that logs every statement it runs.
    const db = new Kysely<Database>({
      dialect: new ImmediateSqliteDialect({ database: base.sqlite! }),
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    });
    const observed: Store = {
      ...base,
      db,
      transaction: (work) => db.transaction().execute(work),
      consistentRead: (work) => db.transaction().setAccessMode('read only').execute(work),
    };
    services = new ProviderServices(observed);
    orgId = (await services.ensureOrg('acme')).orgId;
    for (const [index, name] of names.entries()) {
      await services.importApi(orgId, {
        text: JSON.stringify(apiDocument(name)),
        file: `${name}.json`,
        state: index % 2 === 0 ? 'online' : 'offline',
      });
    }
  });
  after(async () => {
    await testStore.dispose();
  });

  test('from its document: the APIs named resolved, then one read before the lock and two under it', async () => {
    const put = () =>
      services.putProduct(orgId, 'sandbox', { text: product('Bundle'), file: 'bundle.yaml', state: 'published' });
    const selects = await apiSelects(async () => {
      const published = await put();
      assert.equal(published.activated.length, count / 2);
    });
    console.log(`putProduct (published, ${count} APIs): ${selects} SELECTs on apis`);
    // `count` to resolve the APIs named by name:version; the APIs once before the lock; the APIs
    // and the catalog's served base paths under it.
    assert.ok(selects <= count + 3, `${selects} SELECTs on apis`);

    const again = await apiSelects(async () => assert.equal((await put()).changed, false));
    console.log(`putProduct unchanged: ${again} SELECTs on apis`);
    assert.ok(again <= count + 3, `${again} SELECTs on apis`);
  });

  test('through its lifecycle: one read before the lock, two under it', async () => {
    await services.setProductState(orgId, 'sandbox', 'bundle', '1.0.0', 'deprecated');
    const selects = await apiSelects(() => services.setProductState(orgId, 'sandbox', 'bundle', '1.0.0', 'published'));
    console.log(`setProductState published (${count} APIs): ${selects} SELECTs on apis`);
    // The product's API list and its APIs before the lock; the same and the served base paths under it.
    assert.ok(selects <= 5, `${selects} SELECTs on apis`);
  });
});
