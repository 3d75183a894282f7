/**
 * The console's users page against a real management server, over HTTP with the console's
 * cookies and CSRF tokens: the list for every role, the forms only for users:manage (a hand-made
 * post refused otherwise), adding a user who then signs in, role changes, removal ending the
 * user's session, the services' owner rules shown on the page with nothing changed, escaping of
 * what a user typed; then one Chromium pass with axe-core over the page and a refused add.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consoleSignIn, launchChromium, screenshot, seriousAccessibilityFindings } from '../helpers/browser.ts';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';

const password = 'console-pass-123';

describe('console users page', () => {
  let t: TestPlatform;
  let owner: WebClient;

  async function signedIn(username: string, secret = password): Promise<WebClient> {
    const web = new WebClient(t.management);
    await web.get('/console/sign-in');
    const answer = await web.post('/console/sign-in', { username, password: secret, next: '/console/users' });
    assert.equal(answer.status, 303, `${username} signs in`);
    await web.get('/console/users');
    return web;
  }

  /** The org's users as the REST API lists them: username → role. */
  async function roles(): Promise<Record<string, string>> {
    const answer = await t.call('GET', '/api/users');
    assert.equal(answer.status, 200);
    return Object.fromEntries(answer.body.map((u: { username: string; role: string }) => [u.username, u.role]));
  }

  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    for (const [username, role] of [
      ['team-viewer', 'viewer'],
      ['team-dev', 'developer'],
      ['team-admin', 'administrator'],
      ['team-ops', 'community-manager'],
    ]) {
      const email = `${username}@example.com`;
      assert.equal((await t.call('POST', '/api/users', { username, email, password, role })).status, 201);
    }
    owner = await signedIn('admin', adminPassword);
  });
  after(async () => {
    await t.close();
  });

  test('a viewer sees every user with email, role and date, linked from the navigation, and no forms', async () => {
    const viewer = await signedIn('team-viewer');
    const page = await viewer.get('/console/users');
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/console\/users"\s+aria-current="page"\s*>Users<\/a\s*>/);
    assert.match(page.text, /<caption>Users<\/caption>/);
    for (const header of ['Username', 'Email', 'Role', 'Added'])
      assert.match(page.text, new RegExp(`<th scope="col" >${header}</th>`));
    const row = page.text.split('<tr>').find((r) => r.includes('<strong>team-dev</strong')) ?? '';
    assert.match(row, /<td>team-dev@example\.com<\/td>/);
    assert.match(row, /<code>developer<\/code>/);
    assert.match(row, /<time datetime="\d{4}-\d\d-\d\dT/);
    assert.match(page.text, /<strong>team-viewer<\/strong\s*> <span class="hint">\(you\)<\/span>/);
    assert.doesNotMatch(page.text, /action="\/console\/users/, 'no add, role or remove form');
    assert.doesNotMatch(page.text, /Add a user|Change role/);
    assert.match(page.text, /needs the users:manage permission/);
  });

  test("a viewer's and a developer's hand-made posts are refused naming users:manage, and change nothing", async () => {
    const before = await roles();
    for (const username of ['team-viewer', 'team-dev']) {
      const web = await signedIn(username);
      const add = await web.post('/console/users', { username: `${username}-made`, password, role: 'owner' });
      assert.equal(add.status, 403, username);
      assert.match(add.text, /this needs the permission users:manage, which the role (viewer|developer) does not have/);
      const promote = await web.post('/console/users/team-ops/role', { role: 'administrator' });
      assert.equal(promote.status, 403);
      const remove = await web.post('/console/users/team-ops/remove');
      assert.equal(remove.status, 403);
    }
    assert.deepEqual(await roles(), before);
  });

  test('the owner adds a user (role default developer) who can then sign in to the console', async () => {
    const page = await owner.get('/console/users');
    assert.match(page.text, /<h2>Add a user<\/h2>/);
    assert.match(
      page.text,
      /<option value="developer" selected>developer<\/option>/,
      'the form offers developer first',
    );
    const added = await owner.post('/console/users', {
      username: 'new-hire',
      email: 'new-hire@example.com',
      password: 'first-pass-123',
      role: 'community-manager',
    });
    assert.equal(added.status, 303, added.text);
    assert.equal(added.location, '/console/users?done=added');
    assert.match((await owner.get(added.location)).text, /User added: they can sign in/);
    assert.equal((await roles())['new-hire'], 'community-manager');

    const fresh = await signedIn('new-hire', 'first-pass-123');
    assert.match((await fresh.get('/console/users')).text, /<li class="who">new-hire · community-manager<\/li>/);

    const plain = await owner.post('/console/users', { username: 'no-role-given', password: 'first-pass-123' });
    assert.equal(plain.status, 303);
    assert.equal((await roles())['no-role-given'], 'developer');
  });

  test('a refused add is shown again as written, the reason beside the field, and adds no one', async () => {
    const before = await roles();
    const badName = await owner.post('/console/users', {
      username: 'two words',
      email: 'two@example.com',
      password: 'first-pass-123',
      role: 'viewer',
    });
    assert.equal(badName.status, 400);
    assert.match(
      badName.text,
      /id="username"[^>]*aria-describedby="username-hint username-error"[^>]*aria-invalid="true"/,
    );
    assert.match(badName.text, /id="username-error">Username must be 2-64 letters, digits or \._@-\.</);
    assert.match(
      badName.text,
      /role="alert">The user was not added: <a href="#username">Username must be 2-64 letters, digits or \._@-\.<\/a>/,
      'a summary at the top links to the field',
    );
    assert.match(badName.text, /name="username"\s+value="two words"/, 'what was typed is kept');
    assert.match(badName.text, /name="email"\s+value="two@example\.com"/);
    assert.match(badName.text, /<option value="viewer" selected>viewer<\/option>/);
    assert.doesNotMatch(badName.text, /first-pass-123/, 'the password is never sent back');

    const weak = await owner.post('/console/users', { username: 'weak-one', password: 'short' });
    assert.equal(weak.status, 400);
    assert.match(weak.text, /id="password-error">Password must be at least 10 characters/);

    const taken = await owner.post('/console/users', { username: 'team-dev', password: 'first-pass-123' });
    assert.equal(taken.status, 409);
    assert.match(taken.text, /id="username-error">The user name team-dev is not available; choose another\.</);
    assert.deepEqual(await roles(), before);
  });

  test('the owner changes a role; the REST API and the user see the new one', async () => {
    const changed = await owner.post('/console/users/team-ops/role', { role: 'viewer' });
    assert.equal(changed.status, 303, changed.text);
    assert.equal(changed.location, '/console/users?done=role');
    assert.match((await owner.get(changed.location)).text, /Role changed: it applies to the user&#39;s next request\./);
    assert.equal((await roles())['team-ops'], 'viewer');
    const unknown = await owner.post('/console/users/team-ops/role', { role: 'superuser' });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /Could not change the role of team-ops: Role must be one of: owner, administrator,/);
    assert.equal((await roles())['team-ops'], 'viewer');
    const ops = await signedIn('team-ops');
    assert.match((await ops.get('/console/users')).text, /<li class="who">team-ops · viewer<\/li>/);
  });

  test("an administrator is refused the owner role by the services' rule, shown on the page; nothing changes", async () => {
    const before = await roles();
    const administrator = await signedIn('team-admin');
    const promote = await administrator.post('/console/users/team-dev/role', { role: 'owner' });
    assert.equal(promote.status, 403);
    assert.match(
      promote.text,
      /role="alert">Could not change the role of team-dev: only an owner may give the owner role, or change or remove an owner\.</,
    );
    const demoteOwner = await administrator.post('/console/users/admin/remove');
    assert.equal(demoteOwner.status, 403);
    assert.match(demoteOwner.text, /Could not remove admin: only an owner may/);
    const addOwner = await administrator.post('/console/users', { username: 'shadow', password, role: 'owner' });
    assert.equal(addOwner.status, 403);
    assert.match(addOwner.text, /role="alert">Could not add the user: only an owner may give the owner role/);
    assert.match(addOwner.text, /name="username"\s+value="shadow"/);
    assert.deepEqual(await roles(), before);
  });

  test('the last owner can be neither demoted nor removed; the page says why', async () => {
    const before = await roles();
    const demote = await owner.post('/console/users/admin/role', { role: 'administrator' });
    assert.equal(demote.status, 409);
    assert.match(demote.text, /admin is the organization&#39;s last owner; make another user owner first\./);
    const remove = await owner.post('/console/users/admin/remove');
    assert.equal(remove.status, 409);
    assert.match(remove.text, /Could not remove admin: admin is the organization&#39;s last owner/);
    assert.deepEqual(await roles(), before);
    assert.equal((await owner.get('/console/users')).status, 200, 'the owner is still signed in');
  });

  test('a post without the CSRF token is refused and changes nothing; with the token it is taken', async () => {
    const before = await roles();
    const add = await owner.post('/console/users', { username: 'no-token', password }, false);
    assert.equal(add.status, 403);
    assert.match(add.text, /Missing or invalid CSRF token\. Reload the page and try again\./);
    assert.equal((await owner.post('/console/users/team-dev/role', { role: 'viewer' }, false)).status, 403);
    assert.equal((await owner.post('/console/users/team-dev/remove', {}, false)).status, 403);
    assert.deepEqual(await roles(), before);
    const withToken = await owner.post('/console/users/team-dev/role', { role: 'viewer' });
    assert.equal(withToken.status, 303, 'the same post with the token is taken');
    assert.equal((await roles())['team-dev'], 'viewer');
  });

  test("removing a user deletes it and ends its console session at once; another org's user is not found", async () => {
    const leaving = await signedIn('new-hire', 'first-pass-123');
    const page = await owner.get('/console/users');
    assert.match(page.text, /data-confirm="Remove new-hire\? Their console sessions and API tokens end at once\."/);
    const removed = await owner.post('/console/users/new-hire/remove');
    assert.equal(removed.status, 303, removed.text);
    assert.equal(removed.location, '/console/users?done=removed');
    assert.match((await owner.get(removed.location)).text, /User removed/);
    assert.equal((await roles())['new-hire'], undefined);
    const after = await leaving.get('/console/users');
    assert.equal(after.status, 303);
    assert.match(after.location, /^\/console\/sign-in/);

    const rival = await t.platform.services.ensureOrg('rivalusers', 'Rival');
    await t.platform.services.addProviderUser(rival.orgId, { username: 'their-owner', email: '', password });
    const elsewhere = await owner.post('/console/users/their-owner/remove');
    assert.equal(elsewhere.status, 404);
    assert.ok(await t.platform.services.providerUserNamed('their-owner'), 'the other org keeps its user');
  });

  test('what a user typed is escaped: a script-like email and a refused script-like username', async () => {
    const email = '"><script>alert(1)</script>@example.com';
    const added = await owner.post('/console/users', { username: 'odd-mail', email, password });
    assert.equal(added.status, 303, added.text);
    const page = await owner.get('/console/users');
    assert.match(page.text, /<td>&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;@example\.com<\/td>/);
    assert.doesNotMatch(page.text, /<script>alert/);
    const refused = await owner.post('/console/users', { username: '<script>x</script>', email, password });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /value="&lt;script&gt;x&lt;\/script&gt;"/);
    assert.doesNotMatch(refused.text, /<script>/);
  });

  test('Chromium: the users page and a refused add have no serious axe-core findings', async () => {
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await consoleSignIn(page, t.management, 'admin', adminPassword);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      assert.deepEqual(await seriousAccessibilityFindings(page), [], 'users page');
      await page.getByLabel('Username').fill('browser-made');
      await page.getByLabel('Password').fill('short');
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.getByRole('alert').filter({ hasText: 'Password must be at least 10 characters' }).waitFor();
      assert.deepEqual(await seriousAccessibilityFindings(page), [], 'refused add');
      await screenshot(page, 'console-users-refused');
      await page.getByLabel('Password').fill('browser-pass-123');
      await page.getByRole('button', { name: 'Add user' }).click();
      await page.getByText('User added').waitFor();
      await page.getByLabel('Role of browser-made').selectOption('developer');
      await page.getByRole('button', { name: 'Change role of browser-made' }).click();
      await page.getByText('Role changed').waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Remove browser-made' }).click();
      await page.getByText('User removed').waitFor();
      await screenshot(page, 'console-users');
    } finally {
      await browser.close();
    }
    assert.equal((await roles())['browser-made'], undefined);
  });
});
