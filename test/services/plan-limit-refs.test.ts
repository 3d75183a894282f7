/**
 * An assembly `ratelimit` with `source: plan-named` counts against a limit each plan defines by
 * name. A plan covering the API that does not define the name used to count nothing for its
 * callers (the provider's limit silently skipped); now every publish path refuses it
 * (`unknown-plan-limit`), and a document stored before the rule is refused at the gateway
 * (500), never admitted uncounted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DefinitionError } from '../../src/errors.ts';
import * as apisRepo from '../../src/store/apis.ts';
import { recordChange } from '../../src/store/changes.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import { clientIdScheme, secApi } from '../helpers/security-api.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import type { Doc } from '../helpers/security-api.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

/** `search` consumed inside a switch case, then the answer `served`. */
const limitedAssembly = {
  execute: [
    {
      switch: {
        version: '2.0.0',
        case: [
          {
            condition: "$httpVerb() = 'GET'",
            execute: [{ ratelimit: { version: '2.0.0', source: 'plan-named', 'rate-limit': [{ name: 'search' }] } }],
          },
        ],
      },
    },
    { 'set-variable': { actions: [{ set: 'message.body', value: 'served' }] } },
  ],
};
const refPath = '$.x-ibm-configuration.assembly.execute[0].switch.case[0].execute[0].ratelimit.rate-limit[0].name';

/** An API `<name>:1.0.0` at `/<name>` that needs a client id; `assembly` as given, else one answering `served`. */
function api(name: string, assembly?: Doc): Doc {
  const document = secApi({
    schemes: { id: clientIdScheme },
    security: [{ id: [] }],
    ...(assembly ? { ibm: { assembly } } : {}),
  }) as Record<string, Record<string, unknown>>;
  Object.assign(document, { basePath: `/${name}` });
  Object.assign(document.info, { 'x-ibm-name': name, title: name });
  return document;
}

const gold = `gold: { title: Gold, assembly-rate-limits: { search: { value: 3/1hour, hard-limit: true } } }`;
const product = (name: string, plans: string[], apis: string) =>
  `product: 1.0.0\ninfo: { name: ${name}, title: ${name}, version: 1.0.0 }\nplans:\n${plans.map((p) => `  ${p}\n`).join('')}apis: ${apis}\n`;

/** Asserts the error is DEF_INVALID `unknown-plan-limit` with these fields, its reason naming each of `names`. */
function refusal(file: string, path: string, names: string[]) {
  return (error: unknown) => {
    assert.ok(error instanceof DefinitionError, String(error));
    const body = error.toJSON().error;
    assert.equal(body.code, 'DEF_INVALID');
    assert.equal(body.rule, 'unknown-plan-limit');
    assert.equal(body.file, file);
    assert.equal(body.path, path);
    for (const name of names) assert.ok(error.message.includes(name), `${error.message} names ${name}`);
    return true;
  };
}

for (const backend of ['sqlite', 'postgres'] as const)
  describe(`assembly ratelimit plan-named: every covering plan defines the name (${backend})`, () => {
    let db: TestStore | undefined;
    let t: TestPlatform;
    let sandboxId: string;
    const services = () => t.platform.services;
    const importApi = (name: string, assembly?: Doc) =>
      services().importApi(t.orgId, {
        text: JSON.stringify(api(name, assembly)),
        file: `${name}.json`,
        replace: true,
        state: 'online',
      });
    const putProduct = (name: string, plans: string[], apis: string, state: 'staged' | 'published' = 'published') =>
      services().putProduct(t.orgId, 'sandbox', { text: product(name, plans, apis), file: `${name}.yaml`, state });
    /** A consumer org with an app subscribed to `plan` of product `name`; its client id. */
    const subscribed = async (productName: string, plan: string): Promise<string> => {
      const consumer = t.platform.consumerServices;
      const title = `${productName}-${plan}`;
      await consumer.signUp(sandboxId, { email: `${title}@example.com`, password: 'dev-pass-1234', orgTitle: title });
      const org = (await findConsumerOrgByName(services().store.db, sandboxId, title))!;
      const { app, credential } = await consumer.createApp(org.id, { title: `App ${title}` });
      const row = await services().product(t.orgId, 'sandbox', productName, '1.0.0');
      await consumer.subscribe(org.id, { appId: app.id, productId: row.id, planName: plan });
      return credential.client_id;
    };
    const call = async (path: string, clientId: string) => {
      const response = await fetch(`${t.gateway}/acme/sandbox${path}?n=1`, {
        headers: { 'X-IBM-Client-Id': clientId },
      });
      return { status: response.status, body: await response.text() };
    };

    before(async () => {
      db = backend === 'postgres' ? await postgresTestStore() : undefined;
      t = await startTestPlatform({ env: db ? { PORTICO_DATABASE_URL: db.url } : {} });
      sandboxId = (await services().ensureOrg('acme')).sandbox.id;
    });
    after(async () => {
      await t.close();
      await db?.dispose();
    });

    test('a product publish is refused when a plan covering the API does not define the name', async () => {
      await importApi('refs', limitedAssembly);
      await assert.rejects(
        putProduct('pa', [gold, 'silver: { title: Silver }'], `{ a: { name: 'refs:1.0.0' } }`),
        refusal('pa.yaml', '$.plans.silver', ['silver', 'refs:1.0.0', 'search', refPath]),
      );
      await assert.rejects(services().product(t.orgId, 'sandbox', 'pa', '1.0.0'), /not found/);
      // The management API answers the same refusal.
      const text = product('pa', [gold, 'silver: { title: Silver }'], `{ a: { name: 'refs:1.0.0' } }`);
      const answer = await t.call('POST', '/api/catalogs/sandbox/products', {
        document: text,
        file: 'pa.yaml',
        state: 'published',
      });
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.rule, 'unknown-plan-limit');
      assert.equal(answer.body.error.path, '$.plans.silver');
    });

    test('a plan whose apis list leaves the API out need not define it; one listing it must', async () => {
      await importApi('other');
      const plans = [gold, `bronze: { title: Bronze, apis: { b: {} } }`];
      const apis = `{ a: { name: 'refs:1.0.0' }, b: { name: 'other:1.0.0' } }`;
      const published = await putProduct('pcover', plans, apis);
      assert.equal(published.product.state, 'published');
      await assert.rejects(
        putProduct('pcover', [gold, `bronze: { title: Bronze, apis: { a: {} } }`], apis),
        refusal('pcover.yaml', '$.plans.bronze', ['bronze', 'refs:1.0.0', 'search']),
      );
    });

    test('a burst-limit reference is met by assembly-burst-limits, not by a plan limit of that name', async () => {
      const burst = {
        execute: [{ ratelimit: { source: 'plan-named', 'burst-limit': [{ name: 'spike' }] } }],
        catch: [],
      };
      await importApi('bursty', burst);
      const apis = `{ a: { name: 'bursty:1.0.0' } }`;
      await assert.rejects(
        putProduct('pburst', [`gold: { title: Gold, rate-limits: { spike: { value: 5/1hour } } }`], apis),
        refusal('pburst.yaml', '$.plans.gold', [
          'spike',
          '$.x-ibm-configuration.assembly.execute[0].ratelimit.burst-limit[0].name',
        ]),
      );
      const ok = await putProduct(
        'pburst',
        [`gold: { title: Gold, assembly-burst-limits: { spike: { value: 5/1second } } }`],
        apis,
      );
      assert.equal(ok.product.state, 'published');
    });

    test('a staged product stores; publishing it through its lifecycle is refused', async () => {
      const staged = await putProduct(
        'pstage',
        [gold, 'silver: { title: Silver }'],
        `{ a: { name: 'refs:1.0.0' } }`,
        'staged',
      );
      assert.equal(staged.product.state, 'staged');
      await assert.rejects(
        services().setProductState(t.orgId, 'sandbox', 'pstage', '1.0.0', 'published'),
        refusal('pstage:1.0.0', '$.plans.silver', ['silver', 'refs:1.0.0', 'search', refPath]),
      );
      assert.equal((await services().product(t.orgId, 'sandbox', 'pstage', '1.0.0')).state, 'staged');
    });

    test('replacing an API of a published product with one naming an undefined limit is refused', async () => {
      await importApi('late');
      await putProduct('plate', [gold, 'silver: { title: Silver }'], `{ a: { name: 'late:1.0.0' } }`);
      await assert.rejects(
        importApi('late', limitedAssembly),
        refusal('late.json', refPath, ['plate:1.0.0', 'silver', 'late:1.0.0', 'search']),
      );
      const stored = await apisRepo.findApi(services().store.db, t.orgId, 'late', '1.0.0');
      assert.ok(!stored!.document.includes('plan-named'), 'the stored document is unchanged');
    });

    test('an API only in a staged product may be replaced with any plan-named reference', async () => {
      await importApi('draft');
      await putProduct('pdraft', ['silver: { title: Silver }'], `{ a: { name: 'draft:1.0.0' } }`, 'staged');
      const replaced = await importApi('draft', limitedAssembly);
      assert.equal(replaced.changed, true);
    });

    test('a product whose plans define the name publishes, and the limit counts: 3 admitted, the 4th 429', async () => {
      await importApi('counted', limitedAssembly);
      await putProduct('pcount', [gold], `{ a: { name: 'counted:1.0.0' } }`);
      const clientId = await subscribed('pcount', 'gold');
      await t.platform.gateway!.reload();
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await call('/counted/thing', clientId)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    });

    test('a document stored before the rule: the call of a plan without the name is refused (500), never admitted uncounted', async () => {
      await importApi('legacy');
      const unlimited = `platinum: { title: Platinum, assembly-rate-limits: { search: { value: unlimited } } }`;
      await putProduct('plegacy', [gold, 'silver: { title: Silver }', unlimited], `{ a: { name: 'legacy:1.0.0' } }`);
      const silver = await subscribed('plegacy', 'silver');
      const golden = await subscribed('plegacy', 'gold');
      const platinum = await subscribed('plegacy', 'platinum');
      // Written straight to the store, as an API stored before publish checked its references.
      const store = services().store.db;
      const row = (await apisRepo.findApi(store, t.orgId, 'legacy', '1.0.0'))!;
      const document = api('legacy', limitedAssembly);
      await apisRepo.replaceApiDocument(store, row.id, { title: row.title, basePath: row.base_path, document });
      await recordChange(store, 'api', services().store.dialect, row.id);
      await t.platform.gateway!.reload();

      for (let i = 0; i < 2; i++) {
        const refused = await call('/legacy/thing', silver);
        assert.equal(refused.status, 500);
        assert.deepEqual(JSON.parse(refused.body), {
          httpCode: '500',
          httpMessage: 'Internal Server Error',
          moreInformation:
            "This call is refused: the API counts it against a rate limit the caller's plan does not define (policy ratelimit)",
        });
      }
      const goldStatuses: number[] = [];
      for (let i = 0; i < 4; i++) goldStatuses.push((await call('/legacy/thing', golden)).status);
      assert.deepEqual(goldStatuses, [200, 200, 200, 429], 'a plan defining the name still counts');
      const platinumStatuses: number[] = [];
      for (let i = 0; i < 5; i++) platinumStatuses.push((await call('/legacy/thing', platinum)).status);
      assert.deepEqual(platinumStatuses, [200, 200, 200, 200, 200], 'a name defined as unlimited admits');
    });
  });
