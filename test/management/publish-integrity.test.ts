/**
 * What a catalog serves stays consistent when publishes, lifecycle steps and API replacements
 * meet: each rule a publish checks holds on every path to "published", and two requests that
 * race cannot both pass a check only one of them may pass (issue: review of session 16).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const api = (name: string, basePath: string) => `swagger: '2.0'
info: {title: ${name}, x-ibm-name: ${name}, version: 1.0.0}
basePath: ${basePath}
securityDefinitions: {client: {type: apiKey, in: header, name: X-IBM-Client-Id}}
security: [{client: []}]
paths: {/x: {get: {responses: {'200': {description: ok}}}}}
x-ibm-configuration: {assembly: {execute: [{invoke: {target-url: 'http://127.0.0.1:9/x'}}]}}
`;
const product = (name: string, apiName: string, planTitle = 'Default') => `product: 1.0.0
info: {name: ${name}, title: ${name}, version: 1.0.0}
visibility: {view: {type: public}, subscribe: {type: authenticated}}
plans: {default: {title: ${planTitle}, approval: false}}
apis: {main: {name: '${apiName}:1.0.0'}}
`;
const products = '/api/catalogs/sandbox/products';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`publish integrity (${backend})`, () => {
    let db: TestStore | undefined;
    let t: TestPlatform;
    before(async () => {
      db = backend === 'postgres' ? await postgresTestStore() : undefined;
      const env: Record<string, string> = db ? { PORTICO_DATABASE_URL: db.url } : {};
      t = await startTestPlatform({ role: 'management', env });
    });
    after(async () => {
      await t.close();
      await db?.dispose();
    });

    const importApi = async (name: string, basePath: string) => {
      const answer = await t.call('POST', '/api/apis', { document: api(name, basePath), file: `${name}.yaml` });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
    };
    const put = (name: string, apiName: string, state: string, planTitle?: string) =>
      t.call('POST', products, { document: product(name, apiName, planTitle), file: `${name}.yaml`, state });

    test('a staged product published through its lifecycle is refused when its base path is served', async () => {
      await importApi('lc-one', '/lc');
      await importApi('lc-two', '/lc');
      assert.equal((await put('lc-p1', 'lc-one', 'published')).status, 201);
      assert.equal((await put('lc-p2', 'lc-two', 'staged')).status, 201);
      const published = await t.call('POST', `${products}/lc-p2/1.0.0/publish`);
      assert.equal(published.status, 409, JSON.stringify(published.body));
      assert.equal(published.body.error.code, 'MGMT_CONFLICT');
      assert.equal(published.body.error.field, 'basePath');
      assert.match(published.body.error.message, /lc-two:1\.0\.0 has base path \/lc, already served .* lc-one:1\.0\.0/);
      assert.equal((await t.call('GET', `${products}/lc-p2/1.0.0`)).body.state, 'staged');
      const offline = await t.call('GET', '/api/apis/lc-two/1.0.0');
      assert.equal(offline.body.state, 'offline', 'a refused publish brings nothing online');
    });

    test("replacing a served API's document with another served API's base path is a 409; the document stays", async () => {
      await importApi('rp-one', '/rp-one');
      await importApi('rp-two', '/rp-two');
      assert.equal((await put('rp-p1', 'rp-one', 'published')).status, 201);
      assert.equal((await put('rp-p2', 'rp-two', 'published')).status, 201);
      const replaced = await t.call('POST', '/api/apis', {
        document: api('rp-two', '/rp-one'),
        file: 'rp-two.yaml',
        replace: true,
      });
      assert.equal(replaced.status, 409, JSON.stringify(replaced.body));
      assert.equal(replaced.body.error.field, 'basePath');
      assert.equal((await t.call('GET', '/api/apis/rp-two/1.0.0')).body.basePath, '/rp-two');
    });

    test('a retire answered 200 is never undone by a publish that raced it', async () => {
      for (let round = 0; round < 8; round++) {
        const name = `race-${round}`;
        await importApi(`${name}-api`, `/${name}`);
        assert.equal((await put(name, `${name}-api`, 'published')).status, 201);
        const [retire, publish] = await Promise.all([
          t.call('POST', `${products}/${name}/1.0.0/retire`),
          put(name, `${name}-api`, 'published', 'Changed'),
        ]);
        assert.equal(retire.status, 200, JSON.stringify(retire.body));
        const final = (await t.call('GET', `${products}/${name}/1.0.0`)).body.state;
        assert.equal(final, 'retired', `round ${round}: publish answered ${publish.status}`);
        if (publish.status !== 200) assert.equal(publish.body.error.code, 'MGMT_CONFLICT');
      }
    });

    test('two products published at once with APIs on one base path: exactly one is served', async () => {
      for (let round = 0; round < 5; round++) {
        await importApi(`bp-${round}-a`, `/bp-${round}`);
        await importApi(`bp-${round}-b`, `/bp-${round}`);
        const answers = await Promise.all([
          put(`bp-${round}-pa`, `bp-${round}-a`, 'published'),
          put(`bp-${round}-pb`, `bp-${round}-b`, 'published'),
        ]);
        const statuses = answers.map((a) => a.status).sort();
        assert.deepEqual(statuses, [201, 409], JSON.stringify(answers.map((a) => a.body)));
      }
    });

    test('the same product or API created by concurrent requests: one is created, none fails with 500', async () => {
      await importApi('dup-api', '/dup');
      const created = await Promise.all([1, 2, 3].map(() => put('dup', 'dup-api', 'staged')));
      assert.deepEqual(
        created.map((a) => a.status).sort(),
        [200, 200, 201],
        JSON.stringify(created.map((a) => a.body)),
      );
      const imported = await Promise.all(
        [1, 2, 3].map(() => t.call('POST', '/api/apis', { document: api('dup-twice', '/dup-twice'), file: 'd.yaml' })),
      );
      assert.deepEqual(imported.map((a) => a.status).sort(), [201, 409, 409]);
      for (const refused of imported.filter((a) => a.status === 409))
        assert.equal(refused.body.error.code, 'MGMT_CONFLICT');
    });
  });
}
