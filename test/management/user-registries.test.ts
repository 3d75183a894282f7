/**
 * The user registry REST routes over HTTP (issue 13): `/api/orgs/:org/user-registries` and
 * `/api/orgs/:org/catalogs/:catalog/user-registries`, against a real management server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

const base = '/api/orgs/acme/user-registries';
const inSandbox = '/api/orgs/acme/catalogs/sandbox/user-registries';
const ldap = {
  name: 'corp',
  title: 'Corporate LDAP',
  registry_type: 'ldap',
  configuration: {
    url: 'ldap://127.0.0.1:1389',
    admin_dn: 'cn=svc,dc=x',
    admin_password: 'bind-secret-42',
    search_dn_base: 'dc=x',
  },
};

describe('user registry REST routes', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
  });
  after(async () => {
    await t.close();
  });

  test('POST creates an authurl registry (201) and GET lists it', async () => {
    const created = await t.call('POST', base, {
      name: 'staff',
      registry_type: 'authurl',
      configuration: { url: 'https://auth.example.com/check', timeout: 5 },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'staff');
    assert.equal(created.body.configuration.url, 'https://auth.example.com/check');
    const listed = await t.call('GET', base);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.map((r: { name: string }) => r.name),
      ['staff'],
    );
  });

  test('an LDAP registry: the bind password is never returned by POST, GET or list', async () => {
    const created = await t.call('POST', base, ldap);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const one = await t.call('GET', `${base}/corp`);
    const all = await t.call('GET', base);
    for (const body of [created.body, one.body, all.body])
      assert.equal(JSON.stringify(body).includes('bind-secret-42'), false);
    assert.equal(one.body.configuration.admin_password_set, true);
    assert.equal(one.body.title, 'Corporate LDAP');
  });

  test('PUT replaces title and configuration; the stored bind password is kept when left out', async () => {
    const { admin_password: _dropped, ...rest } = ldap.configuration;
    const updated = await t.call('PUT', `${base}/corp`, {
      title: 'Corp',
      configuration: { ...rest, url: 'ldaps://127.0.0.1:1636' },
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.title, 'Corp');
    assert.equal(updated.body.configuration.url, 'ldaps://127.0.0.1:1636');
    assert.equal(updated.body.configuration.admin_password_set, true);
  });

  test('validation errors are 400s naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ registry_type: 'authurl', configuration: { url: 'https://a/' } }, 'name'],
      [{ name: 'x1', registry_type: 'kerberos', configuration: {} }, 'registry_type'],
      [{ name: 'x2', registry_type: 'authurl', configuration: { url: 'ftp://a' } }, 'configuration.url'],
      [{ name: 'x3', registry_type: 'ldap', configuration: { url: 'ldap://a' } }, 'search_dn_base'],
      [{ name: 'Bad Name', registry_type: 'authurl', configuration: { url: 'https://a/' } }, 'name'],
    ];
    for (const [body, field] of cases) {
      const answer = await t.call('POST', base, body);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error.code, 'MGMT_VALIDATION');
      assert.match(
        `${answer.body.error.field ?? ''} ${answer.body.error.message}`,
        new RegExp(field.replace('.', '\\.')),
        JSON.stringify(answer.body),
      );
    }
    const typeChange = await t.call('PUT', `${base}/staff`, { registry_type: 'ldap' });
    assert.equal(typeChange.status, 400);
    assert.equal(typeChange.body.error.field, 'registry_type');
  });

  test('a second registry with the same name is a 409', async () => {
    const again = await t.call('POST', base, {
      name: 'staff',
      registry_type: 'authurl',
      configuration: { url: 'https://b/' },
    });
    assert.equal(again.status, 409);
  });

  test('catalog enabling: PUT enables (204), GET lists, DELETE disables', async () => {
    assert.equal((await t.call('PUT', `${inSandbox}/staff`)).status, 204);
    assert.deepEqual(
      (await t.call('GET', inSandbox)).body.map((r: { name: string }) => r.name),
      ['staff'],
    );
    assert.equal((await t.call('DELETE', `${inSandbox}/staff`)).status, 204);
    assert.deepEqual((await t.call('GET', inSandbox)).body, []);
    assert.equal((await t.call('PUT', `${inSandbox}/nobody`)).status, 404);
    assert.equal((await t.call('PUT', '/api/orgs/acme/catalogs/nowhere/user-registries/staff')).status, 404);
  });

  test('another org and its registries answer 404, as an unknown one does', async () => {
    const other = await t.platform.services.ensureOrg('rivalreg', 'Rival');
    const { UserRegistries } = await import('../../src/services/user-registries.ts');
    await new UserRegistries(t.platform.services).create(other.orgId, {
      name: 'theirs',
      registry_type: 'authurl',
      configuration: { url: 'https://r/' },
    });
    for (const [method, path] of [
      ['GET', '/api/orgs/rivalreg/user-registries'],
      ['GET', '/api/orgs/rivalreg/user-registries/theirs'],
      ['DELETE', '/api/orgs/rivalreg/user-registries/theirs'],
      ['PUT', '/api/orgs/rivalreg/catalogs/sandbox/user-registries/theirs'],
      ['GET', `${base}/theirs`],
    ]) {
      const answer = await t.call(method, path);
      assert.equal(answer.status, 404, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    }
  });

  test('DELETE removes the registry (204) and a second DELETE is a 404', async () => {
    await t.call('PUT', `${inSandbox}/corp`);
    assert.equal((await t.call('DELETE', `${base}/corp`)).status, 204);
    assert.equal((await t.call('GET', `${base}/corp`)).status, 404);
    assert.equal((await t.call('DELETE', `${base}/corp`)).status, 404);
    assert.deepEqual((await t.call('GET', inSandbox)).body, [], 'a deleted registry is no longer enabled anywhere');
  });
});

describe('console user registries page', () => {
  let t: TestPlatform;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    await t.call('POST', base, ldap);
    await t.call('POST', base, {
      name: 'staff',
      title: 'Staff',
      registry_type: 'authurl',
      configuration: { url: 'https://auth.example.com/check' },
    });
    await t.call('PUT', `${inSandbox}/staff`);
  });
  after(async () => {
    await t.close();
  });

  /** Signs in through the console's own form; returns the session cookie. */
  async function signIn(): Promise<string> {
    const form = await fetch(`${t.management}/console/sign-in`);
    const preSession = form.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .join('; ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const body = new URLSearchParams({
      _csrf: csrf,
      username: 'admin',
      password: adminPassword,
      next: '/console',
    });
    const answer = await fetch(`${t.management}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: preSession, 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    assert.equal(answer.status, 303);
    const session = answer.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .find((c) => /^portico_console=./.test(c));
    assert.ok(session, 'the sign-in sets the console session cookie');
    return session;
  }

  test("lists the org's registries, their type and URL, and the catalogs that enable them; never the bind password", async () => {
    const page = await fetch(`${t.management}/console/user-registries`, {
      headers: { cookie: await signIn() },
    });
    assert.equal(page.status, 200);
    const text = await page.text();
    const rowOf = (name: string) => text.split('<tr>').find((row) => row.includes(`<code>${name}</code>`)) ?? '';
    assert.match(
      rowOf('staff'),
      /Authentication URL[\s\S]*https:\/\/auth\.example\.com\/check[\s\S]*<td>sandbox<\/td>/,
    );
    assert.match(rowOf('corp'), /LDAP[\s\S]*<td>none<\/td>/);
    assert.equal(text.includes('bind-secret-42'), false);
    assert.match(text, /href="\/console\/user-registries" aria-current="page"/);
  });

  test('signed out, the page sends the visitor to sign in', async () => {
    const page = await fetch(`${t.management}/console/user-registries`, { redirect: 'manual' });
    assert.equal(page.status, 303);
    assert.match(page.headers.get('location') ?? '', /^\/console\/sign-in/);
  });
});
