/**
 * Publishing a product reads its APIs' rows in one statement per check run, not once per API
 * per rule: the APIs it names resolved in one statement, the checks before the catalog's lock
 * read only what decides a no-op, and the rules (base paths, security, named registries and
 * providers, plan limits) run once, under the lock, reading the catalog's enabled registries and
 * providers once. The statements are counted through a second Kysely on the store's own SQLite
 * handle, with a query log; nothing is mocked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Kysely } from 'kysely';
import { OAuthProviders } from '../../src/services/oauth-providers.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { UserRegistries } from '../../src/services/user-registries.ts';
import type { Database } from '../../src/store/schema.ts';
import { ImmediateSqliteDialect } from '../../src/store/sqlite-dialect.ts';
import type { Store } from '../../src/store/store.ts';
import { clientIdScheme, secApi } from '../helpers/security-api.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { providerFile } from '../oauth/oauth-helpers.ts';

const count = 20;
const names = Array.from({ length: count }, (_, i) => `api${String(i).padStart(2, '0')}`);

const registryScheme = { type: 'basic', 'x-ibm-authentication-registry': 'people' };
const providerScheme = {
  type: 'oauth2',
  flow: 'application',
  tokenUrl: 'https://x/token',
  scopes: {},
  'x-ibm-oauth-provider': 'demo-oauth',
};

/** An API `name:1.0.0`; a secured one names the user registry `people` and the OAuth provider `demo-oauth`. */
function apiDocument(name: string, secured = false): Record<string, unknown> {
  const document = secured
    ? secApi({
        schemes: { id: clientIdScheme, b: registryScheme, o: providerScheme },
        security: [{ id: [], b: [] }, { o: [] }],
      })
    : secApi({ schemes: { id: clientIdScheme }, security: [{ id: [] }] });
  Object.assign(document, { basePath: `/${name}` });
  Object.assign(document.info as object, { 'x-ibm-name': name, title: name });
  return document;
}

const product = (title: string, name = 'bundle', apis = names) =>
  `product: 1.0.0\ninfo: { name: ${name}, title: ${title}, version: 1.0.0 }\nplans:\n  default: { title: Default }\n` +
  `apis:\n${apis.map((api) => `  ${api}: { name: '${api}:1.0.0' }\n`).join('')}`;
const securedNames = names.map((name) => `secured-${name}`);

describe(`a publish of a product with ${count} APIs`, () => {
  let testStore: TestStore;
  let services: ProviderServices;
  let orgId: string;
  const statements: string[] = [];

  /** The SELECT statements on the `apis` table that `work` runs. */
  async function apiSelects(work: () => Promise<unknown>): Promise<number> {
    statements.length = 0;
    await work();
    return selectsOn('apis');
  }
  /** The SELECT statements on `table` among those last run. */
  const selectsOn = (table: string) =>
    statements.filter((sql) => /^select\b/i.test(sql) && new RegExp(`(from|join) "${table}"`, 'i').test(sql)).length;

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
    const registries = new UserRegistries(services);
    await registries.create(orgId, {
      name: 'people',
      registry_type: 'authurl',
      configuration: { url: 'http://127.0.0.1:1/check', timeout: 1 },
    });
    await registries.enable(orgId, 'sandbox', 'people');
    const providers = new OAuthProviders(services);
    await providers.create(orgId, providerFile);
    await providers.enable(orgId, 'sandbox', 'demo-oauth');
    for (const name of securedNames) {
      await services.importApi(orgId, { text: JSON.stringify(apiDocument(name, true)), file: `${name}.json` });
    }
  });
  after(async () => {
    await testStore.dispose();
  });

  test('from its document: the APIs named resolved in one read, then one before the lock and two under it', async () => {
    const put = () =>
      services.putProduct(orgId, 'sandbox', { text: product('Bundle'), file: 'bundle.yaml', state: 'published' });
    const selects = await apiSelects(async () => {
      const published = await put();
      assert.equal(published.activated.length, count / 2);
    });
    // 23 (20 of them resolving the names one by one) before the names were resolved in one read.
    console.log(`putProduct (published, ${count} APIs): ${selects} SELECTs on apis`);
    // One to resolve the APIs named by name:version; the APIs once before the lock; the APIs
    // and the catalog's served base paths under it: as many for any number of APIs.
    assert.ok(selects <= 4, `${selects} SELECTs on apis`);

    const again = await apiSelects(async () => assert.equal((await put()).changed, false));
    console.log(`putProduct unchanged: ${again} SELECTs on apis`);
    // The names resolved; the APIs, the product's API list and the served base paths for the no-op's checks.
    assert.ok(again <= 4, `${again} SELECTs on apis`);
  });

  test('APIs naming a user registry and an OAuth provider: the catalog enabling them read once', async () => {
    const put = (title: string) =>
      services.putProduct(orgId, 'sandbox', {
        text: product(title, 'secured', securedNames),
        file: 'secured.yaml',
        state: 'published',
      });
    const selects = await apiSelects(() => put('Secured'));
    const registries = selectsOn('catalog_user_registries');
    const providers = selectsOn('catalog_oauth_providers');
    const catalogs = selectsOn('catalogs');
    // 20 of each (one per API) before the check read them once per publish.
    console.log(
      `putProduct (published, ${count} APIs naming a registry and a provider): ${selects} SELECTs on apis, ` +
        `${registries} on the catalog's registries, ${providers} on its providers, ${catalogs} on catalogs`,
    );
    assert.ok(selects <= 4, `${selects} SELECTs on apis`);
    assert.equal(registries, 1);
    assert.equal(providers, 1);
    // 41 on catalogs before: the catalog's name was read again for each API and each check.
    assert.ok(catalogs <= 2, `${catalogs} SELECTs on catalogs`);

    statements.length = 0;
    assert.equal((await put('Secured')).changed, false);
    assert.equal(selectsOn('catalog_user_registries'), 1);
    assert.equal(selectsOn('catalog_oauth_providers'), 1);
  });

  test('through its lifecycle: one read before the lock, two under it', async () => {
    await services.setProductState(orgId, 'sandbox', 'bundle', '1.0.0', 'deprecated');
    const selects = await apiSelects(() => services.setProductState(orgId, 'sandbox', 'bundle', '1.0.0', 'published'));
    console.log(`setProductState published (${count} APIs): ${selects} SELECTs on apis`);
    // The product's API list and its APIs before the lock; the same and the served base paths under it.
    assert.ok(selects <= 5, `${selects} SELECTs on apis`);
  });
});
