/**
 * Provider users over HTTP: roles given and changed, the owner rules, removal ending a user's
 * tokens and console sessions at once, password change ending the other ones, the caller's own
 * token list, and an org never reaching another org's users or tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';
import { findProviderUser } from '../../src/store/orgs.ts';

const password = 'user-pass-1234';

describe('provider users', () => {
  let t: TestPlatform;
  let rivalToken: string;
  const login = async (username: string, secret = password): Promise<string> => {
    const answer = await t.call('POST', '/api/login', { username, password: secret }, null);
    assert.equal(answer.status, 200, `sign-in of ${username}`);
    return answer.body.token;
  };
  const add = async (username: string, role?: string, token?: string) =>
    t.call('POST', '/api/users', { username, password, ...(role ? { role } : {}) }, token);

  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    const rival = await t.platform.services.ensureOrg('rival', 'Rival');
    await t.platform.services.addProviderUser(rival.orgId, { username: 'rival-owner', email: '', password });
    await t.platform.services.addProviderUser(rival.orgId, { username: 'rival-dev', email: '', password });
    rivalToken = await login('rival-owner');
  });
  after(async () => {
    await t.close();
  });

  test("an org's first user is its owner; POST /api/users gives developer unless a role is named", async () => {
    const users = await t.call('GET', '/api/users');
    assert.equal(users.body.find((u: { username: string }) => u.username === 'admin').role, 'owner');
    const plain = await add('plain');
    assert.equal(plain.status, 201);
    assert.equal(plain.body.role, 'developer');
    const viewer = await add('watcher', 'viewer');
    assert.equal(viewer.body.role, 'viewer');
    const bogus = await add('bogus', 'superuser');
    assert.equal(bogus.status, 400);
    assert.equal(bogus.body.error.field, 'role');
  });

  test('PATCH /api/users/:username changes a role, and the new role applies to the next call', async () => {
    await add('promoted', 'viewer');
    const token = await login('promoted');
    assert.equal((await t.call('POST', '/api/catalogs', { name: 'qa', title: 'QA' }, token)).status, 403);
    const changed = await t.call('PATCH', '/api/users/promoted', { role: 'administrator' });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.role, 'administrator');
    assert.equal((await t.call('POST', '/api/catalogs', { name: 'qa', title: 'QA' }, token)).status, 201);
  });

  test('only an owner gives the owner role or changes or removes an owner', async () => {
    await add('second-admin', 'administrator');
    const adminToken = await login('second-admin');
    const give = await add('would-be-owner', 'owner', adminToken);
    assert.equal(give.status, 403);
    assert.equal(give.body.error.code, 'MGMT_FORBIDDEN');
    assert.equal((await t.call('PATCH', '/api/users/admin', { role: 'viewer' }, adminToken)).status, 403);
    assert.equal((await t.call('DELETE', '/api/users/admin', undefined, adminToken)).status, 403);
    assert.equal((await t.call('PATCH', '/api/users/plain', { role: 'owner' }, adminToken)).status, 403);
    assert.equal((await t.call('PATCH', '/api/users/plain', { role: 'community-manager' }, adminToken)).status, 200);
  });

  test('the last owner can be neither demoted nor removed; with a second owner it can', async () => {
    const demote = await t.call('PATCH', '/api/users/admin', { role: 'administrator' });
    assert.equal(demote.status, 409);
    assert.equal(demote.body.error.code, 'MGMT_CONFLICT');
    assert.match(demote.body.error.message, /last owner/);
    assert.equal((await t.call('DELETE', '/api/users/admin')).status, 409);
    assert.equal((await add('co-owner', 'owner')).status, 201);
    const coToken = await login('co-owner');
    assert.equal((await t.call('PATCH', '/api/users/admin', { role: 'administrator' }, coToken)).status, 200);
    assert.equal((await t.call('PATCH', '/api/users/co-owner', { role: 'viewer' }, coToken)).status, 409);
    assert.equal((await t.call('PATCH', '/api/users/admin', { role: 'owner' }, coToken)).status, 200);
  });

  test('two owners demoting each other at once leave one owner', async () => {
    await add('twin-a', 'owner');
    await add('twin-b', 'owner');
    await t.call('PATCH', '/api/users/co-owner', { role: 'viewer' });
    await t.call('PATCH', '/api/users/admin', { role: 'viewer' }, await login('twin-a'));
    const [a, b] = [await login('twin-a'), await login('twin-b')];
    const answers = await Promise.all([
      t.call('PATCH', '/api/users/twin-b', { role: 'viewer' }, a),
      t.call('PATCH', '/api/users/twin-a', { role: 'viewer' }, b),
    ]);
    // The loser is refused either as the last owner (409) or, demoted first, as no owner any more (403).
    const statuses = answers.map((x) => x.status).sort();
    assert.equal(statuses[0], 200);
    assert.ok([403, 409].includes(statuses[1]), `the other answered ${statuses[1]}`);
    const owners = (await t.call('GET', '/api/users', undefined, a)).body.filter(
      (u: { role: string }) => u.role === 'owner',
    );
    assert.equal(owners.length, 1);
    const owner = await login(owners[0].username);
    assert.equal((await t.call('PATCH', '/api/users/admin', { role: 'owner' }, owner)).status, 200);
  });

  test('removing a user ends its tokens and console sessions at once', async () => {
    await add('leaver', 'developer');
    const tokens = [await login('leaver'), await login('leaver')];
    const browser = new WebClient(t.management);
    await browser.get('/console/sign-in');
    const signIn = await browser.post('/console/sign-in', { username: 'leaver', password, next: '/console' });
    assert.equal(signIn.status, 303);
    assert.equal((await browser.get('/console/apis')).status, 200);
    assert.equal((await t.call('DELETE', '/api/users/leaver')).status, 204);
    for (const token of tokens) assert.equal((await t.call('GET', '/api/me', undefined, token)).status, 401);
    const after = await browser.get('/console/apis');
    assert.equal(after.status, 303);
    assert.equal((await t.call('POST', '/api/login', { username: 'leaver', password }, null)).status, 401);
    assert.equal((await t.call('DELETE', '/api/users/leaver')).status, 404);
  });

  test('PUT /api/me/password needs the current password and ends the other tokens, not this one', async () => {
    await add('mover', 'developer');
    const [mine, other] = [await login('mover'), await login('mover')];
    const wrong = await t.call(
      'PUT',
      '/api/me/password',
      { currentPassword: 'not-it-123', newPassword: 'new-pass-5678' },
      mine,
    );
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.field, 'currentPassword');
    const weak = await t.call('PUT', '/api/me/password', { currentPassword: password, newPassword: 'short' }, mine);
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error.field, 'newPassword');
    assert.equal((await t.call('GET', '/api/me', undefined, other)).status, 200, 'a refused change ends nothing');
    const ok = await t.call(
      'PUT',
      '/api/me/password',
      { currentPassword: password, newPassword: 'new-pass-5678' },
      mine,
    );
    assert.equal(ok.status, 204);
    assert.equal((await t.call('GET', '/api/me', undefined, other)).status, 401);
    assert.equal((await t.call('GET', '/api/me', undefined, mine)).status, 200);
    assert.equal((await t.call('POST', '/api/login', { username: 'mover', password }, null)).status, 401);
    await login('mover', 'new-pass-5678');
  });

  test('GET /api/tokens lists only the caller’s own tokens without secrets; DELETE revokes one', async () => {
    await add('holder', 'viewer');
    const [first, second] = [await login('holder'), await login('holder')];
    const listed = await t.call('GET', '/api/tokens', undefined, first);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.length, 2);
    const text = JSON.stringify(listed.body);
    assert.ok(!text.includes(first) && !text.includes(second), 'no token in the list');
    for (const entry of listed.body)
      assert.deepEqual(Object.keys(entry).sort(), ['createdAt', 'current', 'expiresAt', 'id']);
    const other = listed.body.find((entry: { current: boolean }) => !entry.current);
    assert.equal((await t.call('DELETE', `/api/tokens/${other.id}`, undefined, first)).status, 204);
    assert.equal((await t.call('GET', '/api/me', undefined, second)).status, 401);
    assert.equal((await t.call('GET', '/api/me', undefined, first)).status, 200);
    assert.equal((await t.call('GET', '/api/tokens', undefined, first)).body.length, 1);
  });

  test('a sign-in may ask how many days its token lives, within PORTICO_API_TOKEN_MAX_DAYS (90)', async () => {
    await add('timer', 'viewer');
    const day = 86_400_000;
    const expiresIn = async (extra: Record<string, unknown>) => {
      const answer = await t.call('POST', '/api/login', { username: 'timer', password, ...extra }, null);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return (Date.parse(answer.body.expiresAt) - Date.now()) / day;
    };
    // The default: 90 console sessions (8 hours each), 30 days.
    assert.ok(Math.abs((await expiresIn({})) - 30) < 0.01);
    assert.ok(Math.abs((await expiresIn({ expiresInDays: 1 })) - 1) < 0.01);
    assert.ok(Math.abs((await expiresIn({ expiresInDays: 90 })) - 90) < 0.01);
    const listed = (await t.call('GET', '/api/tokens', undefined, await login('timer'))).body as Array<{
      expiresAt: string;
    }>;
    assert.equal(listed.length, 4);
    for (const refused of [0, 91, 1.5, '7']) {
      const answer = await t.call('POST', '/api/login', { username: 'timer', password, expiresInDays: refused }, null);
      assert.equal(answer.status, 400, `expiresInDays ${JSON.stringify(refused)}`);
      assert.equal(answer.body.error.code, 'MGMT_VALIDATION');
      assert.equal(answer.body.error.field, 'expiresInDays');
    }
    assert.equal((await t.call('GET', '/api/tokens', undefined, await login('timer'))).body.length, 5, 'none made');
  });

  test('another user’s token id in the same org is a 404, even for an administrator, and the token lives on', async () => {
    await add('keeper', 'viewer');
    await add('reacher', 'administrator');
    const kept = await login('keeper');
    const reacher = await login('reacher');
    const [entry] = (await t.call('GET', '/api/tokens', undefined, kept)).body as Array<{ id: string }>;
    const refused = await t.call('DELETE', `/api/tokens/${entry.id}`, undefined, reacher);
    assert.equal(refused.status, 404);
    assert.equal(refused.body.error.code, 'MGMT_NOT_FOUND');
    assert.equal((await t.call('GET', '/api/me', undefined, kept)).status, 200);
    assert.equal((await t.call('GET', '/api/tokens', undefined, kept)).body.length, 1);
  });

  test('wrong current passwords are limited as sign-in is: the sixth try is 429 even when right', async () => {
    await add('guesser', 'developer');
    const mine = await login('guesser');
    const change = (currentPassword: string) =>
      t.call('PUT', '/api/me/password', { currentPassword, newPassword: 'new-pass-5678' }, mine);
    for (let i = 0; i < 5; i++) assert.equal((await change(`wrong-pass-${i}1`)).status, 400);
    const limited = await change(password);
    assert.equal(limited.status, 429);
    assert.equal((await t.call('POST', '/api/login', { username: 'guesser', password }, null)).status, 200);
  });

  test('a signed-in user adds users to its own org only, and an owner role only while it is an owner', async () => {
    const services = t.platform.services;
    const db = t.platform.store.db;
    const rivalOwner = (await findProviderUser(db, 'rival-owner'))!;
    const ours = (await findProviderUser(db, 'admin'))!;
    // The service, called with another org than the actor's, refuses (the route always passes the actor's).
    await assert.rejects(
      services.addProviderUser(ours.org_id, { username: 'planted', email: '', password, role: 'owner' }, rivalOwner),
      (error: Error & { code?: string }) => error.code === 'MGMT_FORBIDDEN',
    );
    assert.equal(await findProviderUser(db, 'planted'), undefined);
    // An actor whose owner role was taken after its request began: read again under the org's lock.
    const third = await services.ensureOrg('third', 'Third');
    await services.addProviderUser(third.orgId, { username: 'third-owner', email: '', password });
    await services.addProviderUser(third.orgId, { username: 'third-owner-2', email: '', password, role: 'owner' });
    const stale = (await findProviderUser(db, 'third-owner'))!;
    await t.call('PATCH', '/api/users/third-owner', { role: 'developer' }, await login('third-owner-2'));
    await assert.rejects(
      services.addProviderUser(third.orgId, { username: 'late-owner', email: '', password, role: 'owner' }, stale),
      (error: Error & { code?: string }) => error.code === 'MGMT_FORBIDDEN',
    );
    assert.equal(await findProviderUser(db, 'late-owner'), undefined);
  });

  test("an org's users and tokens are out of another org's reach", async () => {
    const listed = await t.call('GET', '/api/users', undefined, rivalToken);
    assert.deepEqual(
      listed.body.map((u: { username: string }) => u.username),
      ['rival-dev', 'rival-owner'],
    );
    for (const [method, path, body] of [
      ['DELETE', '/api/users/plain', undefined],
      ['PATCH', '/api/users/plain', { role: 'viewer' }],
    ] as const) {
      const answer = await t.call(method, path, body, rivalToken);
      assert.equal(answer.status, 404, `${method} ${path}`);
    }
    const ours = (await t.call('GET', '/api/users')).body.find((u: { username: string }) => u.username === 'plain');
    assert.equal(ours.role, 'community-manager', 'unchanged');
    const adminTokens = (await t.call('GET', '/api/tokens')).body;
    assert.ok(adminTokens.length >= 1);
    assert.equal((await t.call('DELETE', `/api/tokens/${adminTokens[0].id}`, undefined, rivalToken)).status, 404);
    assert.equal((await t.call('GET', '/api/me')).status, 200, 'the admin token still works');
    const ourDeletes = await t.call('DELETE', '/api/users/rival-dev');
    assert.equal(ourDeletes.status, 404);
    assert.equal((await t.call('GET', '/api/users', undefined, rivalToken)).body.length, 2);
  });
});

describe('PORTICO_API_TOKEN_MAX_DAYS below the default lifetime', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management', env: { PORTICO_API_TOKEN_MAX_DAYS: '7' } });
  });
  after(() => t?.close());

  test('caps the default (30 days becomes 7) and what a sign-in may ask', async () => {
    const signIn = (extra: Record<string, unknown>) =>
      t.call('POST', '/api/login', { username: 'admin', password: adminPassword, ...extra }, null);
    const plain = await signIn({});
    assert.equal(plain.status, 200);
    const days = (Date.parse(plain.body.expiresAt) - Date.now()) / 86_400_000;
    assert.ok(Math.abs(days - 7) < 0.01, `default ${days} days`);
    const tooLong = await signIn({ expiresInDays: 8 });
    assert.equal(tooLong.status, 400);
    assert.equal(tooLong.body.error.field, 'expiresInDays');
  });
});
