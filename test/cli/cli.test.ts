import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { manyPathsDocument } from '../definitions/many-paths.ts';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { runPortico as portico } from '../helpers/processes.ts';

const examples = fileURLToPath(new URL('../../examples/accessories/', import.meta.url));

describe('portico CLI against a running management server', () => {
  let t: TestPlatform;
  let env: Record<string, string>;
  let dir: string;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    dir = mkdtempSync(join(tmpdir(), 'portico-cli-'));
    env = { PORTICO_CONFIG: join(dir, 'credentials.json'), HOME: dir };
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a command that needs a server says how to log in, on one line, exit 1', async () => {
    const run = await portico(['apis', 'list'], env);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /^portico: Not logged in: run `portico login --server URL`/);
  });

  test('login with a wrong password fails with one line; the right one keeps a token only its owner can read', async () => {
    const wrong = await portico(
      ['login', '--server', t.management, '--username', 'admin', '--password', 'wrong-pass-1'],
      env,
    );
    assert.equal(wrong.code, 1);
    assert.equal(wrong.stderr, 'portico: Wrong username or password\n');
    const badDays = await portico(
      [
        'login',
        '--server',
        t.management,
        '--username',
        'admin',
        '--password',
        adminPassword,
        '--expires-in-days',
        '2.5',
      ],
      env,
    );
    assert.equal(badDays.code, 1);
    assert.match(badDays.stderr, /^portico: .*--expires-in-days.*whole number of days\n$/);
    const ok = await portico(
      ['login', '--server', t.management, '--username', 'admin', '--password', adminPassword, '--expires-in-days', '2'],
      env,
    );
    assert.equal(ok.code, 0, ok.stderr);
    const until = /logged in to .* as admin until (\S+) \(token saved/.exec(ok.stdout);
    assert.ok(until, ok.stdout);
    assert.ok(Math.abs(Date.parse(until[1]) - Date.now() - 2 * 86_400_000) < 60_000, `expires ${until[1]}`);
    assert.equal(statSync(env.PORTICO_CONFIG).mode & 0o777, 0o600);
    const who = await portico(['whoami'], env);
    assert.match(who.stdout, /^admin at /);
  });

  test('import creates an API offline; importing it again is a conflict; --replace leaves it unchanged', async () => {
    const file = join(examples, 'logistics.yaml');
    const first = await portico(['import', file], env);
    assert.equal(first.stdout, 'created api logistics:2.0.0 (offline)\n', first.stderr);
    const second = await portico(['import', file], env);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /^portico: API logistics:2\.0\.0 already exists/);
    const replaced = await portico(['import', file, '--replace'], env);
    assert.equal(replaced.stdout, 'unchanged api logistics:2.0.0 (offline)\n');
  });

  test('import --target-of adds a WSDL service to an existing API as a targets entry', async () => {
    const run = await portico(['import', join(examples, 'financing.wsdl'), '--target-of', 'logistics:2.0.0'], env);
    assert.equal(run.stdout, 'added target financingService to api logistics:2.0.0\n', run.stderr);
    const stored = await t.call('GET', '/api/apis/logistics/2.0.0');
    const ibm = stored.body.document['x-ibm-configuration'];
    assert.equal(ibm.targets.financingService['x-ibm-configuration'].type, 'wsdl');
    assert.equal(ibm.targets.financingService['x-ibm-configuration']['wsdl-definition'].service, 'financingService');
    assert.ok(ibm.targets.financingService.paths['/financing'].post['x-ibm-soap']['soap-action']);
    assert.match(ibm.properties.financingService_url.value, /^http:\/\/127\.0\.0\.1:9081\/financing\/calculate$/);
    const notWsdl = await portico(['import', join(examples, 'logistics.yaml'), '--target-of', 'logistics:2.0.0'], env);
    assert.equal(notWsdl.code, 1);
    assert.match(notWsdl.stderr, /--target-of takes a WSDL/);
  });

  test('a broken file gets one line per problem naming file, path and rule, exit 1', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'swagger: "2.0"\ninfo:\n  title: x\npaths: {}\n');
    const run = await portico(['import', broken], env);
    assert.equal(run.code, 1);
    assert.equal(run.stderr, 'portico: broken.yaml: $.info.version: version is required [required]\n');
    const missing = await portico(['import', join(dir, 'nope.yaml')], env);
    assert.equal(missing.stderr, `portico: ${join(dir, 'nope.yaml')}: no such file\n`);
    // The server lists the first 100 problems; the last line counts the others.
    const many = join(dir, 'many.json');
    writeFileSync(many, manyPathsDocument(130, true));
    const manyRun = await portico(['import', many], env);
    const lines = manyRun.stderr.trim().split('\n');
    assert.equal(lines.length, 101);
    assert.match(lines[0], /^portico: many\.json: \$\.paths\['\/items0'\]/);
    assert.equal(lines[100], 'portico: many.json: … and 30 more problems');
  });

  test('apply makes the catalog match the folder and is idempotent', async () => {
    const first = await portico(['apply', examples, '--activate'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^changed {2}api logistics:2\.0\.0 \(online\)$/m);
    assert.match(first.stdout, /^created {2}api financing:1\.0\.0 \(online\)$/m);
    assert.match(first.stdout, /^created {2}product accessories:1\.0\.0 \(published\)$/m);
    assert.match(first.stdout, /^created {2}product inventory:1\.0\.0 \(published\)$/m);
    const second = await portico(['apply', examples, '--activate'], env);
    assert.equal(second.code, 0, second.stderr);
    const lines = second.stdout.trim().split('\n');
    assert.ok(
      lines.every((line) => line.startsWith('unchanged')),
      second.stdout,
    );
    assert.equal(lines.length, first.stdout.trim().split('\n').length);
  });

  test('approvals list shows a pending Gold subscription, approve activates it', async () => {
    const services = t.platform.services;
    const consumerServices = t.platform.consumerServices;
    const catalog = await services.catalog(t.orgId, 'sandbox');
    const { org } = await consumerServices.signUp(catalog.id, {
      email: 'cli-dev@example.com',
      password: 'dev-pass-1234',
      orgTitle: 'CLI Devs',
    });
    const { app } = await consumerServices.createApp(org.id, { title: 'CLI App' });
    const product = await services.product(t.orgId, 'sandbox', 'accessories', '1.0.0');
    const pending = await consumerServices.subscribe(org.id, {
      appId: app.id,
      productId: product.id,
      planName: 'gold',
    });
    const list = await portico(['approvals', 'list'], env);
    assert.match(list.stdout, new RegExp(`^${pending.id}\\tCLI Devs / CLI App\\tAccessories 1\\.0\\.0\\tGold$`, 'm'));
    const approve = await portico(['approvals', 'approve', pending.id], env);
    assert.equal(approve.stdout, `subscription ${pending.id} is active\n`);
    const again = await portico(['approvals', 'reject', pending.id], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is active, not pending/);
  });

  test('users add creates a provider user who can log in', async () => {
    const add = await portico(['users', 'add', 'release-bot', '--password', 'release-bot-pass-1'], env);
    assert.equal(add.stdout, 'added provider user release-bot\n', add.stderr);
    const other = { ...env, PORTICO_CONFIG: join(dir, 'bot.json') };
    const login = await portico(
      ['login', '--server', t.management, '--username', 'release-bot', '--password', 'release-bot-pass-1'],
      other,
    );
    assert.equal(login.code, 0, login.stderr);
  });

  test('issue-12: consumer-orgs create makes the organization a custom visibility names, with its owner', async () => {
    const owner = ['--owner-email', 'pat@partner.example', '--owner-password', 'partner-pass-1'];
    const args = ['consumer-orgs', 'create', 'partner-co', '--title', 'Partner Co', ...owner];
    const create = await portico(args, env);
    const said = 'created consumer organization partner-co in sandbox, owned by pat@partner.example\n';
    assert.equal(create.stdout, said, create.stderr);
    const again = await portico(args, env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /consumer organization partner-co already exists in catalog sandbox/);
    const list = await portico(['consumer-orgs', 'list'], env);
    assert.match(list.stdout, /^partner-co\tPartner Co$/m);
    const catalog = await t.platform.services.catalog(t.orgId, 'sandbox');
    const consumerServices = t.platform.consumerServices;
    const user = await consumerServices.authenticatePortalUser(
      catalog.id,
      'pat@partner.example',
      'partner-pass-1',
      'cli-test',
    );
    assert.ok(user.consumer_org_id);
  });

  test('user-registries: create, list, get, update, enable in a catalog, disable and delete', async () => {
    const file = join(dir, 'corp.yaml');
    const registry = (url: string) =>
      `name: corp\ntitle: Corp\nregistry_type: ldap\nconfiguration:\n  url: ${url}\n  admin_dn: cn=svc,dc=x\n` +
      '  admin_password: cli-bind-secret-9\n  search_dn_base: dc=x\n';
    writeFileSync(file, registry('ldap://127.0.0.1:1389'));
    const create = await portico(['user-registries', 'create', file], env);
    assert.equal(create.stdout, 'created user registry corp (ldap)\n', create.stderr);
    assert.match(
      (await portico(['user-registries', 'list'], env)).stdout,
      /^corp\tldap\tCorp\tldap:\/\/127\.0\.0\.1:1389$/m,
    );
    const get = await portico(['user-registries', 'get', 'corp'], env);
    assert.match(get.stdout, /^configuration\.admin_password_set: true$/m);
    const json = await portico(['user-registries', 'get', 'corp', '--json'], env);
    assert.equal(JSON.parse(json.stdout).configuration.search_dn_base, 'dc=x');
    for (const run of [get, json]) assert.equal(run.stdout.includes('cli-bind-secret-9'), false);
    writeFileSync(file, registry('ldaps://127.0.0.1:1636'));
    assert.equal((await portico(['user-registries', 'update', file], env)).stdout, 'updated user registry corp\n');
    assert.equal(
      JSON.parse((await portico(['user-registries', 'list', '--json'], env)).stdout)[0].configuration.url,
      'ldaps://127.0.0.1:1636',
    );
    const enable = await portico(['user-registries', 'enable', 'corp', '--catalog', 'sandbox'], env);
    assert.equal(enable.stdout, 'user registry corp is enabled in sandbox\n', enable.stderr);
    assert.match((await portico(['user-registries', 'list', '--catalog', 'sandbox'], env)).stdout, /^corp\t/m);
    assert.equal((await portico(['user-registries', 'disable', 'corp', '--catalog', 'sandbox'], env)).code, 0);
    assert.equal((await portico(['user-registries', 'list', '--catalog', 'sandbox'], env)).stdout, '');
    assert.equal((await portico(['user-registries', 'delete', 'corp'], env)).stdout, 'deleted user registry corp\n');
    const gone = await portico(['user-registries', 'get', 'corp'], env);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^portico: .*corp/);
  });

  test('user-registries create with an invalid file: one line naming the field, exit 1', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', registry_type: 'authurl', configuration: { url: 'ftp://x' } }));
    const run = await portico(['user-registries', 'create', file], env);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /configuration\.url/);
  });

  test('PORTICO_SERVER and PORTICO_TOKEN override the saved login', async () => {
    const run = await portico(['apis', 'list'], {
      PORTICO_SERVER: t.management,
      PORTICO_TOKEN: 'not-a-token',
      HOME: dir,
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /token is unknown or expired/);
  });
});
