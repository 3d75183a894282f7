/**
 * Hostile input: U+0000 in what a provider or a consumer submits. PostgreSQL cannot store it nor
 * compare with it, so an app title, an organization title or an id holding it failed in the store
 * (500, or 503 once the store was asked whether it answers). Now every request to the management
 * API, the console and the portal that carries one, in its body, query or path parameters, is
 * refused with a 400 naming the field, before any handler, on PostgreSQL as on SQLite, and
 * nothing is written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';
import { WebClient } from '../helpers/web-client.ts';

describe('hardening: U+0000 in submitted text is a 400 naming the field (PostgreSQL store)', () => {
  let db: TestStore;
  let t: TestPlatform;
  const orgs = '/api/catalogs/sandbox/consumer-orgs';

  before(async () => {
    db = await postgresTestStore();
    t = await startTestPlatform({ env: { PORTICO_DATABASE_URL: db.url } });
    const owner = { email: 'wanda@walker.example', password: 'owner-pass-123' };
    assert.equal((await t.call('POST', orgs, { name: 'walker', title: 'Walker', owner })).status, 201);
  });
  after(async () => {
    await t?.close();
    await db?.dispose();
  });

  test('management API: a body field, a nested one, a path parameter and a query', async () => {
    const title = await t.call('POST', `${orgs}/walker/apps`, { title: 'Shop\u0000app' });
    assert.equal(title.status, 400);
    assert.equal(title.body.error.code, 'MGMT_VALIDATION');
    assert.equal(title.body.error.field, 'title');

    const owner = { email: 'o@x.example', password: 'owner-pass-123', name: 'O\u0000' };
    const nested = await t.call('POST', orgs, { name: 'other', title: 'Other', owner });
    assert.equal(nested.status, 400);
    assert.equal(nested.body.error.field, 'owner.name');

    const path = await t.call('GET', `${orgs}/walk%00er`);
    assert.equal(path.status, 400);
    assert.equal(path.body.error.field, 'consumerOrg');

    const query = await t.call('GET', '/api/apis?q=%00');
    assert.equal(query.status, 400);
    assert.equal(query.body.error.field, 'q');

    // Nothing was written; the same requests without U+0000 work.
    assert.deepEqual((await t.call('GET', `${orgs}/walker`)).body.apps, []);
    assert.equal((await t.call('GET', `${orgs}/other`)).status, 404);
    assert.equal((await t.call('POST', `${orgs}/walker/apps`, { title: 'Shop app' })).status, 201);
  });

  test('an API document that writes U+0000 as an escape is refused at import, naming the file and the path', async () => {
    const document = JSON.stringify({
      swagger: '2.0',
      info: { title: 'Nul', version: '1.0.0', 'x-ibm-name': 'nul' },
      basePath: '/nul',
      paths: { '/x': { get: { operationId: 'get\u0000x', responses: { 200: { description: 'ok' } } } } },
    });
    assert.ok(document.includes('\\u0000') && !document.includes('\u0000'), 'the request itself holds no U+0000');
    const imported = await t.call('POST', '/api/apis', { document, file: 'nul.json' });
    assert.equal(imported.status, 400);
    assert.equal(imported.body.error.code, 'DEF_PARSE');
    assert.match(imported.body.error.message, /^nul\.json: .*\$\.paths\.\/x\.get\.operationId contains U\+0000/);
    assert.equal((await t.call('GET', '/api/apis')).body.length, 0, 'nothing imported');
  });

  test('console: a sign-in whose user name holds U+0000 is refused before anything reads it', async () => {
    const client = new WebClient(t.management);
    await client.get('/console/sign-in');
    const answer = await client.post('/console/sign-in', { username: 'ad\u0000min', password: 'admin-pass-123' });
    assert.equal(answer.status, 400);
    assert.match(answer.text, /U\+0000/);
  });

  test('portal: a sign-up whose organization title holds U+0000 is refused, and signs nobody up', async () => {
    const client = new WebClient(t.platform.urls.portal!);
    await client.get('/sign-up');
    const email = 'nul@walker.example';
    const answer = await client.post('/sign-up', { email, password: 'dev-pass-1234', orgTitle: 'Nul\u0000Org' });
    assert.equal(answer.status, 400);
    assert.match(answer.text, /U\+0000/);
    const again = new WebClient(t.platform.urls.portal!);
    assert.notEqual(await again.signIn(email, 'dev-pass-1234'), 303, 'no account was made');
  });
});
