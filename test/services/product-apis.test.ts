/**
 * A product's `apis:` entries resolved to stored APIs, by `name:version` or by a `$ref` to an
 * attached API file: the first entry in the product's order that cannot be resolved is the one
 * reported (an unknown API, an attachment not given, an attachment that does not parse), and
 * names that share a version or versions that share a name resolve to their own API only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OAuthProviders } from '../../src/services/oauth-providers.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { UserRegistries } from '../../src/services/user-registries.ts';
import { listProductApis } from '../../src/store/products.ts';
import { clientIdScheme, secApi } from '../helpers/security-api.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { providerFile } from '../oauth/oauth-helpers.ts';

/** An API `name:version`; with `registry` or `provider`, its schemes name that user registry or OAuth provider. */
function apiDocument(name: string, version: string, names: { registry?: string; provider?: string } = {}) {
  const schemes: Record<string, unknown> = { id: clientIdScheme };
  const security: Array<Record<string, string[]>> = [{ id: [] }];
  if (names.registry) {
    schemes.b = { type: 'basic', 'x-ibm-authentication-registry': names.registry };
    security[0].b = [];
  }
  if (names.provider) {
    const scopes = {};
    schemes.o = {
      type: 'oauth2',
      flow: 'application',
      tokenUrl: 'https://x/token',
      scopes,
      'x-ibm-oauth-provider': names.provider,
    };
    security.push({ o: [] });
  }
  const document = secApi({ schemes, security });
  Object.assign(document, { basePath: `/${name}-${version.replace(/\./g, '-')}` });
  Object.assign(document.info as object, { 'x-ibm-name': name, title: name, version });
  return document;
}

/** A product whose `apis:` holds `entries` (each the YAML of one entry value), by key. */
const product = (entries: Record<string, string>) =>
  `product: 1.0.0\ninfo: { name: refs, title: Refs, version: 1.0.0 }\nplans:\n  default: { title: Default }\n` +
  `apis:\n${Object.entries(entries)
    .map(([key, value]) => `  ${key}: ${value}\n`)
    .join('')}`;

interface Refusal {
  code?: string;
  params?: { file?: string; path?: string; rule?: string; reason?: string; index?: number };
}

describe('the APIs a product names', () => {
  let testStore: TestStore;
  let services: ProviderServices;
  let orgId: string;

  before(async () => {
    testStore = await sqliteTestStore();
    services = new ProviderServices(testStore.store);
    orgId = (await services.ensureOrg('acme')).orgId;
    for (const [name, version] of [
      ['alpha', '1.0.0'],
      ['alpha', '2.0.0'],
      ['beta', '1.0.0'],
    ]) {
      await services.importApi(orgId, {
        text: JSON.stringify(apiDocument(name, version)),
        file: `${name}-${version}.json`,
      });
    }
    const registries = new UserRegistries(services);
    for (const name of ['people', 'others']) {
      const configuration = { url: 'http://127.0.0.1:1/check', timeout: 1 };
      await registries.create(orgId, { name, registry_type: 'authurl', configuration });
    }
    await registries.enable(orgId, 'sandbox', 'people');
    const providers = new OAuthProviders(services);
    await providers.create(orgId, providerFile);
    await providers.create(orgId, {
      ...providerFile,
      name: 'elsewhere',
      native_provider: { ...providerFile.native_provider, api: { basePath: '/elsewhere' } },
    });
    await providers.enable(orgId, 'sandbox', 'demo-oauth');
    const secured: Array<[string, { registry?: string; provider?: string }]> = [
      ['good', { registry: 'people', provider: 'demo-oauth' }],
      ['noreg', { registry: 'others', provider: 'demo-oauth' }],
      ['noprov', { registry: 'people', provider: 'elsewhere' }],
      ['neither', { registry: 'others', provider: 'elsewhere' }],
    ];
    for (const [name, named] of secured) {
      await services.importApi(orgId, {
        text: JSON.stringify(apiDocument(name, '1.0.0', named)),
        file: `${name}.json`,
      });
    }
  });
  after(async () => {
    await testStore.dispose();
  });

  const put = (entries: Record<string, string>, attachments?: Record<string, string>) =>
    services.putProduct(orgId, 'sandbox', { text: product(entries), file: 'refs.yaml', attachments });

  /** The refusal `work` meets, as its code and params. */
  async function refusal(work: () => Promise<unknown>): Promise<Refusal> {
    try {
      await work();
    } catch (error) {
      return error as Refusal;
    }
    assert.fail('not refused');
  }

  test('names sharing a version and versions sharing a name resolve to their own API', async () => {
    const refused = await refusal(() =>
      put({ a1: "{ name: 'alpha:1.0.0' }", a2: "{ name: 'alpha:2.0.0' }", b2: "{ name: 'beta:2.0.0' }" }),
    );
    assert.equal(refused.code, 'DEF_INVALID');
    assert.deepEqual(refused.params, {
      file: 'refs.yaml',
      path: '$.apis.b2',
      rule: 'unknown-api',
      reason: 'the product names API beta:2.0.0, which does not exist (import it first)',
      index: 2,
    });
    const stored = await put({
      a1: "{ name: 'alpha:1.0.0' }",
      a2: "{ name: 'alpha:2.0.0' }",
      b1: "{ name: 'beta:1.0.0' }",
    });
    const apis = await listProductApis(testStore.store.db, stored.product.id);
    const linked = apis.map((api) => `${api.api_key}=${api.name}:${api.version}`).sort();
    assert.deepEqual(linked, ['a1=alpha:1.0.0', 'a2=alpha:2.0.0', 'b1=beta:1.0.0']);
  });

  test('the first unknown API in the product order is reported', async () => {
    const refused = await refusal(() =>
      put({ a1: "{ name: 'alpha:1.0.0' }", g: "{ name: 'gamma:1.0.0' }", d: "{ name: 'delta:1.0.0' }" }),
    );
    assert.equal(refused.params?.path, '$.apis.g');
    assert.equal(refused.params?.index, 1);
    assert.match(refused.params?.reason ?? '', /gamma:1\.0\.0/);
  });

  test('an unknown API before an attachment not given is reported, and the other way round', async () => {
    const first = await refusal(() => put({ g: "{ name: 'gamma:1.0.0' }", r: "{ $ref: './missing.json' }" }));
    assert.equal(first.params?.rule, 'unknown-api');
    assert.equal(first.params?.path, '$.apis.g');
    const second = await refusal(() => put({ r: "{ $ref: './missing.json' }", g: "{ name: 'gamma:1.0.0' }" }));
    assert.deepEqual(second.params, {
      file: 'refs.yaml',
      path: '$.apis.r',
      rule: 'unresolved-ref',
      reason: 'the API file ./missing.json was not given with the product',
    });
  });

  test('an attachment that does not parse is reported in its turn', async () => {
    const attachments = { 'broken.json': '{ not json' };
    const before = await refusal(() =>
      put({ g: "{ name: 'gamma:1.0.0' }", r: "{ $ref: './broken.json' }" }, attachments),
    );
    assert.equal(before.params?.rule, 'unknown-api');
    const after = await refusal(() =>
      put({ r: "{ $ref: './broken.json' }", g: "{ name: 'gamma:1.0.0' }" }, attachments),
    );
    assert.notEqual(after.params?.rule, 'unknown-api');
    assert.match(String(after.params?.file), /broken\.json/);
  });

  test('an attachment resolves to the stored API it defines, or names the one missing', async () => {
    const beta = { 'beta.json': JSON.stringify(apiDocument('beta', '1.0.0')) };
    const stored = await put({ b: "{ $ref: './beta.json' }", a1: "{ name: 'alpha:1.0.0' }" }, beta);
    assert.equal(stored.changed, true);
    const gamma = { 'gamma.json': JSON.stringify(apiDocument('gamma', '3.0.0')) };
    const refused = await refusal(() => put({ a1: "{ name: 'alpha:1.0.0' }", c: "{ $ref: 'gamma.json' }" }, gamma));
    assert.deepEqual(refused.params, {
      file: 'refs.yaml',
      path: '$.apis.c',
      rule: 'unknown-api',
      reason: 'the product names API gamma:3.0.0, which does not exist (import it first)',
      index: 1,
    });
  });

  test('a registry or provider the catalog does not enable: the first API naming one, its registry before its provider', async () => {
    const publish = (apis: string[]) =>
      refusal(() =>
        services.putProduct(orgId, 'sandbox', {
          text: product(Object.fromEntries(apis.map((api) => [api, `{ name: '${api}:1.0.0' }`]))),
          file: 'refs.yaml',
          state: 'published',
        }),
      );
    const registry = (api: string) => ({
      file: `${api}:1.0.0`,
      path: '$.securityDefinitions',
      rule: 'unknown-user-registry',
      reason: 'x-ibm-authentication-registry names user registry others, which catalog sandbox does not enable',
    });
    const provider = (api: string) => ({
      file: `${api}:1.0.0`,
      path: '$.securityDefinitions',
      rule: 'unknown-oauth-provider',
      reason: 'x-ibm-oauth-provider names OAuth provider elsewhere, which catalog sandbox does not enable',
    });
    assert.deepEqual((await publish(['good', 'noprov', 'noreg'])).params, provider('noprov'));
    assert.deepEqual((await publish(['good', 'noreg', 'noprov'])).params, registry('noreg'));
    assert.deepEqual((await publish(['neither', 'noprov'])).params, registry('neither'));
  });
});
