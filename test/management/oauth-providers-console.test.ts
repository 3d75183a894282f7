/**
 * The console's OAuth providers page (issue 14) against a real management server, over HTTP with
 * the console's cookies and CSRF tokens: list, create from the form and from a pasted file, the
 * stored result read back through the REST API, inline errors naming the field, edit, enable and
 * disable per catalog, delete; then one Chromium pass with axe-core over the form and an error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { consoleSignIn, launchChromium, screenshot, seriousAccessibilityFindings } from '../helpers/browser.ts';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { WebClient } from '../helpers/web-client.ts';

const rest = '/api/orgs/acme/oauth-providers';
const inSandbox = '/api/orgs/acme/catalogs/sandbox/oauth-providers';

/** The form as a browser sends it: repeated names for the checked boxes. */
function formBody(fields: Array<[string, string]>): Record<string, string> & { toString(): string } {
  return new URLSearchParams(fields) as unknown as Record<string, string>;
}

const validForm: Array<[string, string]> = [
  ['source', 'form'],
  ['name', 'shop-auth'],
  ['title', 'Shop sign-in'],
  ['grants', 'application'],
  ['grants', 'access_code'],
  ['clients', 'confidential'],
  ['clients', 'public'],
  ['scopes', 'read Read the catalog\nwrite:orders Place orders'],
  ['access_token_ttl', '1800'],
  ['code_ttl', ''],
  ['refresh_enabled', 'on'],
  ['refresh_ttl', '86400'],
  ['pkce_enabled', 'on'],
  ['pkce_required', 'on'],
  ['user_registry', 'staff'],
  ['base_path', '/shop-oauth'],
  ['authorize_path', ''],
  ['token_path', '/oauth2/issue'],
];

const pastedYaml = `name: partner-auth
title: Partner tokens
grants: [application]
scopes:
  read: Read the catalog
description: kept as given
native_provider:
  access_token_ttl: 600
  refresh_token: { enabled: false }
`;

describe('console OAuth providers page', () => {
  let t: TestPlatform;
  let web: WebClient;

  /** A console POST with the session's CSRF token; `fields` in browser order. */
  function post(path: string, fields: Array<[string, string]>) {
    return web.request('POST', path, formBody([['_csrf', web.csrf], ...fields]));
  }

  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    const registry = await t.call('POST', '/api/orgs/acme/user-registries', {
      name: 'staff',
      registry_type: 'authurl',
      configuration: { url: 'https://auth.example.com/check' },
    });
    assert.equal(registry.status, 201);
    web = new WebClient(t.management);
    await web.get('/console/sign-in');
    const signedIn = await web.post('/console/sign-in', {
      username: 'admin',
      password: adminPassword,
      next: '/console',
    });
    assert.equal(signedIn.status, 303);
  });
  after(async () => {
    await t.close();
  });

  test('the list is linked from the console navigation and says when there are none', async () => {
    const page = await web.get('/console/oauth-providers');
    assert.equal(page.status, 200);
    assert.match(page.text, /<a href="\/console\/oauth-providers"\s+aria-current="page"\s*>OAuth providers<\/a\s*>/);
    assert.match(page.text, /No OAuth providers yet\./);
  });

  test('the form creates a provider; the REST API reads back the file it made', async () => {
    await web.get('/console/oauth-providers/new');
    const created = await post('/console/oauth-providers', validForm);
    assert.equal(created.status, 303, created.text);
    assert.equal(created.location, '/console/oauth-providers/shop-auth?done=created');
    const stored = await t.call('GET', `${rest}/shop-auth`);
    assert.equal(stored.status, 200);
    const { created_at: _c, updated_at: _u, ...file } = stored.body;
    assert.deepEqual(file, {
      name: 'shop-auth',
      title: 'Shop sign-in',
      provider_type: 'native',
      grants: ['application', 'access_code'],
      clients: ['confidential', 'public'],
      scopes: { read: 'Read the catalog', 'write:orders': 'Place orders' },
      native_provider: {
        api: { basePath: '/shop-oauth' },
        token_path: '/oauth2/issue',
        access_token_ttl: 1800,
        refresh_token: { enabled: true, ttl: 86400 },
        pkce: { enabled: true, required: true, allow_plain: false },
        user_registry: 'staff',
      },
    });
    const page = await web.get(created.location);
    assert.match(page.text, /Provider created\./);
    assert.match(page.text, /<code>\/shop-oauth<\/code>/);
  });

  test('a pasted YAML file creates the same provider the REST API makes from that file', async () => {
    const created = await post('/console/oauth-providers', [
      ['source', 'file'],
      ['file', pastedYaml],
    ]);
    assert.equal(created.status, 303, created.text);
    const viaRest = await t.call('POST', rest, {
      name: 'partner-rest',
      title: 'Partner tokens',
      grants: ['application'],
      scopes: { read: 'Read the catalog' },
      description: 'kept as given',
      native_provider: { access_token_ttl: 600, refresh_token: { enabled: false } },
    });
    assert.equal(viaRest.status, 201);
    const strip = ({ name: _n, created_at: _c, updated_at: _u, ...file }: Record<string, unknown>) => file;
    assert.deepEqual(strip((await t.call('GET', `${rest}/partner-auth`)).body), strip(viaRest.body));
  });

  test('a refused form is shown again as written, the error beside the field it names', async () => {
    const publicWithoutPkce = validForm
      .filter(([name]) => name !== 'pkce_enabled' && name !== 'pkce_required')
      .map(([name, value]): [string, string] => [name, name === 'name' ? 'no-pkce' : value]);
    const answer = await post('/console/oauth-providers', publicWithoutPkce);
    assert.equal(answer.status, 400);
    assert.match(answer.text, /id="pkce_enabled"[^>]*aria-describedby="pkce_enabled-error"[^>]*aria-invalid="true"/);
    assert.match(
      answer.text,
      /id="pkce_enabled-error">native_provider\.pkce\.enabled: public clients need PKCE \(RFC 7636\)</,
    );
    assert.match(answer.text, /id="name"\s+name="name"\s+value="no-pkce"/, 'what was typed is kept');
    assert.equal((await t.call('GET', `${rest}/no-pkce`)).status, 404, 'nothing was created');

    const badTtl = validForm.map(([name, value]): [string, string] => [
      name,
      name === 'name' ? 'bad-ttl' : name === 'access_token_ttl' ? 'an hour' : value,
    ]);
    const ttl = await post('/console/oauth-providers', badTtl);
    assert.equal(ttl.status, 400);
    assert.match(ttl.text, /id="access_token_ttl-error">native_provider\.access_token_ttl: whole seconds, 1 to 86400</);
    assert.match(ttl.text, /id="access_token_ttl"\s+name="access_token_ttl"\s+value="an hour"/);
  });

  test('a malformed or invalid pasted file is refused beside the file, with the line or the field', async () => {
    const malformed = await post('/console/oauth-providers', [
      ['source', 'file'],
      ['file', 'name: x\ngrants: [application\n'],
    ]);
    assert.equal(malformed.status, 400);
    assert.match(malformed.text, /id="file-error">the provider file: cannot be parsed as YAML: line \d+/);
    const invalid = await post('/console/oauth-providers', [
      ['source', 'file'],
      ['file', 'name: odd\ngrants: [implicit]\nscopes: { read: r }\n'],
    ]);
    assert.equal(invalid.status, 400);
    assert.match(invalid.text, /id="file-error">grants: implicit is not one of application, access_code, password</);
    assert.match(invalid.text, /grants: \[implicit\]/, 'the pasted text is kept');
    const again = await post('/console/oauth-providers', [
      ['source', 'file'],
      ['file', pastedYaml],
    ]);
    assert.equal(again.status, 409);
    assert.match(again.text, /id="file-error">[^<]*partner-auth already exists/);
  });

  test('the edit form changes what it shows and keeps the fields it does not show', async () => {
    const page = await web.get('/console/oauth-providers/partner-auth');
    assert.match(page.text, /<h1>Partner tokens<\/h1>/);
    const saved = await post('/console/oauth-providers/partner-auth', [
      ['source', 'form'],
      ['title', 'Partner access'],
      ['grants', 'application'],
      ['clients', 'confidential'],
      ['scopes', 'read Read the catalog\nstock Read stock levels'],
      ['access_token_ttl', '900'],
      ['pkce_enabled', 'on'],
    ]);
    assert.equal(saved.status, 303, saved.text);
    const stored = (await t.call('GET', `${rest}/partner-auth`)).body;
    assert.equal(stored.title, 'Partner access');
    assert.deepEqual(stored.scopes, { read: 'Read the catalog', stock: 'Read stock levels' });
    assert.equal(stored.native_provider.access_token_ttl, 900);
    assert.equal(stored.native_provider.refresh_token.enabled, false);
    assert.equal(stored.description, 'kept as given');
  });

  test('enable and disable per catalog, as the REST API sees it; a base path clash is refused on the page', async () => {
    const enabled = await post('/console/oauth-providers/shop-auth/catalogs/sandbox/enable', []);
    assert.equal(enabled.status, 303);
    assert.deepEqual(
      (await t.call('GET', inSandbox)).body.map((p: { name: string }) => p.name),
      ['shop-auth'],
    );
    const list = await web.get('/console/oauth-providers');
    const row = list.text.split('<tr>').find((r) => r.includes('<code>shop-auth</code>')) ?? '';
    assert.match(row, /<td>sandbox<\/td>/);

    const clash = await t.call('POST', rest, {
      name: 'clash',
      grants: ['application'],
      scopes: { read: 'r' },
      native_provider: { api: { basePath: '/shop-oauth' } },
    });
    assert.equal(clash.status, 201);
    const refused = await post('/console/oauth-providers/clash/catalogs/sandbox/enable', []);
    assert.equal(refused.status, 409);
    assert.match(refused.text, /shop-auth already uses base path \/shop-oauth in sandbox/);

    const disabled = await post('/console/oauth-providers/shop-auth/catalogs/sandbox/disable', []);
    assert.equal(disabled.status, 303);
    assert.deepEqual((await t.call('GET', inSandbox)).body, []);
  });

  test('a form posted without the CSRF token is refused and changes nothing', async () => {
    const answer = await web.request('POST', '/console/oauth-providers/clash/delete', formBody([]));
    assert.equal(answer.status, 403);
    assert.equal((await t.call('GET', `${rest}/clash`)).status, 200);
  });

  test('delete removes the provider; another org cannot see or delete its providers', async () => {
    const deleted = await post('/console/oauth-providers/clash/delete', []);
    assert.equal(deleted.status, 303);
    assert.equal(deleted.location, '/console/oauth-providers?done=deleted');
    assert.equal((await t.call('GET', `${rest}/clash`)).status, 404);
    assert.equal((await web.get('/console/oauth-providers/clash')).status, 404);

    const rival = await t.platform.services.ensureOrg('rivaloauth', 'Rival');
    const { OAuthProviders } = await import('../../src/services/oauth-providers.ts');
    await new OAuthProviders(t.platform.services).create(rival.orgId, {
      name: 'theirs',
      grants: ['application'],
      scopes: { read: 'r' },
    });
    assert.equal((await web.get('/console/oauth-providers/theirs')).status, 404);
    assert.equal((await post('/console/oauth-providers/theirs/delete', [])).status, 404);
  });

  test('Chromium: the new-provider form and a refused submission have no serious axe-core findings', async () => {
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      await consoleSignIn(page, t.management, 'admin', adminPassword);
      await page.goto(`${t.management}/console/oauth-providers/new`);
      assert.deepEqual(await seriousAccessibilityFindings(page), [], 'new provider form');
      await page.getByLabel('Name').fill('browser-made');
      await page.getByLabel('Client credentials (application)').check();
      await page.getByLabel('Scopes').fill('read Read');
      await page.getByLabel('Public (PKCE, no secret)').check();
      await page.getByLabel('Enabled', { exact: true }).uncheck();
      await page.getByRole('button', { name: 'Create provider' }).click();
      await page.getByRole('alert').filter({ hasText: 'public clients need PKCE' }).waitFor();
      assert.deepEqual(await seriousAccessibilityFindings(page), [], 'refused form');
      await screenshot(page, 'console-oauth-provider-refused');
      await page.getByLabel('Enabled', { exact: true }).check();
      await page.getByRole('button', { name: 'Create provider' }).click();
      await page.getByText('Provider created.').waitFor();
      assert.deepEqual(await seriousAccessibilityFindings(page), [], 'provider page');
    } finally {
      await browser.close();
    }
  });
});
