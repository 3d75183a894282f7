/**
 * An approval that races a retire never revives a subscription the retire cancelled: the
 * decision moves a subscription out of `pending` in one conditional update, so whichever comes
 * second finds it decided (review of session 16, finding F6). On PostgreSQL the two run truly
 * at once; on SQLite they serialise and the test pins the same rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

const api = (name: string) => `swagger: '2.0'
info: {title: ${name}, x-ibm-name: ${name}, version: 1.0.0}
basePath: /${name}
securityDefinitions: {client: {type: apiKey, in: header, name: X-IBM-Client-Id}}
security: [{client: []}]
paths: {/x: {get: {responses: {'200': {description: ok}}}}}
x-ibm-configuration: {assembly: {execute: [{invoke: {target-url: 'http://127.0.0.1:9/x'}}]}}
`;
const product = (name: string) => `product: 1.0.0
info: {name: ${name}, title: ${name}, version: 1.0.0}
visibility: {view: {type: public}, subscribe: {type: authenticated}}
plans: {gold: {title: Gold, approval: true}}
apis: {main: {name: '${name}-api:1.0.0'}}
`;
const catalog = '/api/catalogs/sandbox';

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`subscription approval racing a retire (${backend})`, () => {
    let db: TestStore | undefined;
    let t: TestPlatform;
    before(async () => {
      db = backend === 'postgres' ? await postgresTestStore() : undefined;
      const env: Record<string, string> = db ? { PORTICO_DATABASE_URL: db.url } : {};
      t = await startTestPlatform({ role: 'management', env });
      const owner = { email: 'owner@race.example', password: 'race-pass-123', name: 'Owner' };
      const org = await t.call('POST', `${catalog}/consumer-orgs`, { name: 'race-org', owner });
      assert.equal(org.status, 201, JSON.stringify(org.body));
    });
    after(async () => {
      await t.close();
      await db?.dispose();
    });

    /** A product with an approval plan and a pending subscription to it; its name and the subscription id. */
    async function pendingSubscription(name: string): Promise<string> {
      const imported = await t.call('POST', '/api/apis', { document: api(`${name}-api`), file: `${name}.yaml` });
      assert.equal(imported.status, 201, JSON.stringify(imported.body));
      const put = await t.call('POST', `${catalog}/products`, {
        document: product(name),
        file: `${name}.yaml`,
        state: 'published',
      });
      assert.equal(put.status, 201, JSON.stringify(put.body));
      const app = await t.call('POST', `${catalog}/consumer-orgs/race-org/apps`, { title: `App ${name}` });
      assert.equal(app.status, 201, JSON.stringify(app.body));
      const subscribe = { product: name, version: '1.0.0', plan: 'gold' };
      const pending = await t.call(
        'POST',
        `${catalog}/consumer-orgs/race-org/apps/${app.body.id}/subscriptions`,
        subscribe,
      );
      assert.equal(pending.status, 201, JSON.stringify(pending.body));
      assert.equal(pending.body.state, 'pending');
      return pending.body.id as string;
    }

    test('no round ends with an active subscription to a retired product', async () => {
      for (let round = 0; round < 8; round++) {
        const name = `ar-${round}`;
        const id = await pendingSubscription(name);
        const [approve, retire] = await Promise.all([
          t.call('POST', `${catalog}/subscriptions/${id}/approve`),
          t.call('POST', `${catalog}/products/${name}/1.0.0/retire`),
        ]);
        assert.equal(retire.status, 200, JSON.stringify(retire.body));
        const final = (await t.call('GET', `${catalog}/subscriptions/${id}`)).body;
        assert.equal(final.state, 'cancelled', `round ${round}: approve answered ${approve.status}`);
        if (approve.status !== 200) assert.equal(approve.body.error.code, 'MGMT_CONFLICT');
      }
    });

    // The window, held open: the approval has read "pending" and waits on the row while another
    // transaction cancels it (as a retire does). Only PostgreSQL lets a test hold a row lock
    // (SQLite's writers serialise from the start of their transactions).
    if (backend === 'postgres')
      test('an approval that read "pending" before a cancel commits leaves the subscription cancelled', async () => {
        const id = await pendingSubscription('held');
        const client = new pg.Client({ connectionString: db!.url });
        await client.connect();
        try {
          await client.query('begin');
          await client.query('select id from subscriptions where id = $1 for update', [id]);
          const approving = t.call('POST', `${catalog}/subscriptions/${id}/approve`);
          await new Promise((resolve) => setTimeout(resolve, 300));
          await client.query(`update subscriptions set state = 'cancelled' where id = $1`, [id]);
          await client.query('commit');
          const approve = await approving;
          assert.equal(approve.status, 409, JSON.stringify(approve.body));
          assert.equal(approve.body.error.code, 'MGMT_CONFLICT');
          assert.match(approve.body.error.message, /is cancelled, not pending/);
          assert.equal((await t.call('GET', `${catalog}/subscriptions/${id}`)).body.state, 'cancelled');
        } finally {
          await client.end();
        }
      });
  });
}
