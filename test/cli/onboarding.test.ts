/**
 * Issue 16, item 6: a provider onboards a consumer with the CLI alone — organization, app with
 * credentials, subscription to a plan needing approval, approval — and the gateway then answers
 * the app's client id; every list and get reads as JSON; `publish` brings the product's offline
 * APIs online or, with `--no-activate`, refuses naming them; `serve` prints the gateway per catalog.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { runPortico as portico, startPortico } from '../helpers/processes.ts';
import { clientIdScheme, secApi } from '../helpers/security-api.ts';

/** Runs a command that must succeed with `--json` and returns what it printed, parsed. */
async function json(args: string[], env: Record<string, string>) {
  const run = await portico([...args, '--json'], env);
  assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Two APIs guarded by a client id, answered by their assembly (no backend), and a product of both. */
function writeDefinitions(dir: string): { product: string; apis: string[] } {
  const security = { schemes: { clientId: clientIdScheme }, security: [{ clientId: [] }] };
  const first = secApi(security);
  const info = { title: 'Sec 2', version: '1.0.0', 'x-ibm-name': 'sec2' };
  const second = { ...secApi(security), basePath: '/sec2', info };
  const apis = [join(dir, 'sec.json'), join(dir, 'sec2.json')];
  writeFileSync(apis[0], JSON.stringify(first));
  writeFileSync(apis[1], JSON.stringify(second));
  const product = join(dir, 'onboard-product.yaml');
  writeFileSync(
    product,
    `product: 1.0.0
info: { name: onboard, title: Onboard, version: 1.0.0 }
visibility: { view: { type: authenticated }, subscribe: { type: authenticated } }
plans:
  default: { title: Default }
  gold: { title: Gold, approval: true }
apis:
  sec: { name: 'sec:1.0.0' }
  sec2: { name: 'sec2:1.0.0' }
`,
  );
  return { product, apis };
}

describe('issue-16: a provider onboards a consumer end to end with the CLI alone', () => {
  let t: TestPlatform;
  let env: Record<string, string>;
  let dir: string;
  let files: { product: string; apis: string[] };
  let app: { id: string; clientId: string; clientSecret: string; consumerOrg: string };
  let subscriptionId: string;
  const gatewayStatus = async (clientId: string) => {
    const headers = { 'X-IBM-Client-Id': clientId };
    const response = await fetch(`${t.gateway}/acme/sandbox/sec/thing?n=1`, { headers });
    await response.arrayBuffer();
    return response.status;
  };
  /** The gateway follows changes on its own (change bus); waits until it answers `status`. */
  const gatewayAnswers = async (clientId: string, status: number) => {
    let last = 0;
    for (let i = 0; i < 50 && last !== status; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      last = await gatewayStatus(clientId);
    }
    return last;
  };

  before(async () => {
    t = await startTestPlatform();
    dir = mkdtempSync(join(tmpdir(), 'portico-onboarding-'));
    env = { PORTICO_CONFIG: join(dir, 'credentials.json'), HOME: dir };
    files = writeDefinitions(dir);
    const credentials = ['--username', 'admin', '--password', adminPassword];
    const login = await portico(['login', '--server', t.management, ...credentials], env);
    assert.equal(login.code, 0, login.stderr);
    for (const file of files.apis) assert.equal((await portico(['import', file], env)).code, 0);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('publish --no-activate refuses a product with offline APIs, naming them; nothing is published', async () => {
    const run = await portico(['publish', files.product, '--no-activate'], env);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    const said = /^portico: product onboard:1\.0\.0 uses offline APIs sec:1\.0\.0, sec2:1\.0\.0; bring them online/;
    assert.match(run.stderr, said);
    const apis = (await json(['apis', 'list'], env)) as Array<{ name: string; state: string }>;
    assert.deepEqual(apis.map((a) => [a.name, a.state]).sort(), [
      ['sec', 'offline'],
      ['sec2', 'offline'],
    ]);
    assert.equal((await t.call('GET', '/api/catalogs/sandbox/products/onboard/1.0.0')).status, 404);
  });

  test('publish brings the offline APIs online and says so; publishing again changes nothing', async () => {
    const run = await portico(['publish', files.product], env);
    const said = 'created product onboard:1.0.0 (published) in sandbox; brought online: sec:1.0.0, sec2:1.0.0\n';
    assert.equal(run.stdout, said, run.stderr);
    const apis = (await json(['apis', 'list'], env)) as Array<{ name: string; state: string }>;
    assert.deepEqual(
      apis.map((a) => a.state),
      ['online', 'online'],
    );
    const again = await portico(['publish', files.product, '--no-activate'], env);
    assert.equal(again.stdout, 'unchanged product onboard:1.0.0 (published) in sandbox\n', again.stderr);
  });

  test('consumer-orgs create, then get and list read as JSON', async () => {
    const owner = ['--owner-email', 'wanda@walker.example', '--owner-password', 'walker-pass-1'];
    const create = await portico(['consumer-orgs', 'create', 'walker', '--title', 'Walker Shops', ...owner], env);
    assert.equal(create.code, 0, create.stderr);
    const org = await json(['consumer-orgs', 'get', 'walker'], env);
    assert.equal(org.name, 'walker');
    assert.equal(org.title, 'Walker Shops');
    assert.deepEqual(org.apps, []);
    const list = (await json(['consumer-orgs', 'list'], env)) as Array<{ name: string }>;
    assert.deepEqual(
      list.map((o) => o.name),
      ['walker'],
    );
  });

  test('apps create answers the client id and the secret once; get and list show only the client id', async () => {
    app = await json(['apps', 'create', 'Walker Shop', '--consumer-org', 'walker', '--description', 'the shop'], env);
    assert.equal(app.consumerOrg, 'walker');
    assert.match(app.clientId, /^[0-9a-f]{32}$/);
    assert.ok(app.clientSecret.length >= 32);
    const text = await portico(['apps', 'create', 'Walker Kiosk', '--consumer-org', 'walker'], env);
    const [created, id, secret] = text.stdout.split('\n');
    assert.match(created, /^created app \S+ "Walker Kiosk" in walker$/);
    assert.match(id, /^ {2}client id {6}[0-9a-f]{32}$/);
    assert.match(secret, /^ {2}client secret {2}\S+ {3}\(shown once/);
    const got = await portico(['apps', 'get', app.id, '--consumer-org', 'walker', '--json'], env);
    assert.equal(JSON.parse(got.stdout).credentials[0].clientId, app.clientId);
    assert.ok(!got.stdout.includes(app.clientSecret), 'the secret is shown once, in the create answer only');
    const ofOrg = (await json(['apps', 'list', '--consumer-org', 'walker'], env)) as Array<{ title: string }>;
    assert.deepEqual(
      ofOrg.map((a) => a.title),
      ['Walker Shop', 'Walker Kiosk'],
    );
    const ofCatalog = (await json(['apps', 'list'], env)) as Array<{ id: string }>;
    assert.ok(ofCatalog.some((a) => a.id === app.id));
  });

  test('a subscription to a plan needing approval is pending; the gateway refuses the app until approval', async () => {
    assert.notEqual(await gatewayStatus(app.clientId), 200);
    const args = ['subscriptions', 'create', '--consumer-org', 'walker', '--app', app.id, '--product', 'onboard:1.0.0'];
    const run = await portico([...args, '--plan', 'gold'], env);
    assert.equal(run.code, 0, run.stderr);
    const [first, hint] = run.stdout.trim().split('\n');
    const match = /^subscription (\S+) of app \S+ to onboard:1\.0\.0 gold is pending$/.exec(first);
    assert.ok(match, run.stdout);
    subscriptionId = match[1];
    assert.equal(hint.trim(), `the plan needs approval: portico approvals approve ${subscriptionId} --catalog sandbox`);
    assert.notEqual(await gatewayStatus(app.clientId), 200);
    const pending = (await json(['approvals', 'list'], env)) as Array<{ id: string; plan_name: string }>;
    assert.deepEqual(
      pending.map((s) => [s.id, s.plan_name]),
      [[subscriptionId, 'gold']],
    );
  });

  test('approvals approve activates it, and the gateway answers the app with 200', async () => {
    const approve = await portico(['approvals', 'approve', subscriptionId], env);
    assert.equal(approve.stdout, `subscription ${subscriptionId} is active\n`, approve.stderr);
    const got = await json(['subscriptions', 'get', subscriptionId], env);
    assert.equal(got.state, 'active');
    assert.equal(got.app_id, app.id);
    assert.equal(await gatewayAnswers(app.clientId, 200), 200);
    const all = (await json(['subscriptions', 'list', '--state', 'active'], env)) as Array<{ id: string }>;
    assert.deepEqual(
      all.map((s) => s.id),
      [subscriptionId],
    );
    assert.deepEqual(await json(['approvals', 'list'], env), []);
  });

  test('every other list reads as JSON', async () => {
    const users = (await json(['users', 'list'], env)) as Array<{ username: string }>;
    assert.deepEqual(
      users.map((u) => u.username),
      ['admin'],
    );
    const org = await json(['consumer-orgs', 'get', 'walker'], env);
    assert.equal(org.apps.length, 2);
    const detail = await json(['apps', 'get', app.id, '--consumer-org', 'walker'], env);
    const subscriptions = detail.subscriptions.map((s: { id: string; state: string }) => [s.id, s.state]);
    assert.deepEqual(subscriptions, [[subscriptionId, 'active']]);
  });

  test('errors name the field and the reason, one line, exit 1', async () => {
    const base = ['subscriptions', 'create', '--consumer-org', 'walker', '--app', app.id];
    const onboard = [...base, '--product', 'onboard:1.0.0'];
    const cases: Array<[string[], RegExp]> = [
      [[...onboard, '--plan', 'platinum'], /^portico: plan: product onboard has no plan platinum\n$/],
      [
        [...base, '--product', 'nope:1.0.0', '--plan', 'gold'],
        /^portico: product: catalog sandbox has no product nope:1\.0\.0\n$/,
      ],
      [[...base, '--product', 'onboard', '--plan', 'gold'], /--product.*expected name:version/],
      [[...base, '--product', 'onboard:1.0.0', '--plan', 'default'], /already subscribed to Onboard \(Gold, active\)/],
      [['apps', 'create', 'X', '--consumer-org', 'nobody'], /^portico: consumer organization nobody not found\n$/],
      [['apps', 'create', ' ', '--consumer-org', 'walker'], /^portico: title: is required \(1-100 characters\)\n$/],
      [['subscriptions', 'get', 'no-such-id'], /^portico: subscription no-such-id not found\n$/],
    ];
    for (const [args, expected] of cases) {
      const run = await portico(args, env);
      assert.equal(run.code, 1, args.join(' '));
      assert.match(run.stderr, expected);
    }
  });

  test('apps delete and consumer-orgs delete remove them; the gateway forgets the client id', async () => {
    const apps = (await json(['apps', 'list', '--consumer-org', 'walker'], env)) as Array<{ id: string }>;
    const kiosk = apps[1];
    const removed = await portico(['apps', 'delete', kiosk.id, '--consumer-org', 'walker'], env);
    assert.equal(removed.stdout, `deleted app ${kiosk.id} of walker\n`, removed.stderr);
    const gone = await portico(['consumer-orgs', 'delete', 'walker'], env);
    assert.equal(gone.stdout, 'deleted consumer organization walker from sandbox\n', gone.stderr);
    assert.deepEqual(await json(['consumer-orgs', 'list'], env), []);
    const get = await portico(['consumer-orgs', 'get', 'walker'], env);
    assert.equal(get.stderr, 'portico: consumer organization walker not found\n');
    assert.equal(await gatewayAnswers(app.clientId, 401), 401);
  });
});

describe('issue-16: serve prints the gateway once per catalog, with its /<org>/<catalog>/ prefix', () => {
  test('serve --role all lists http://host:port/<org>/<catalog>/', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'portico-serve-'));
    const env = { PORTICO_ORG: 'walkers', HOME: dataDir };
    const node = await startPortico(['serve', '--data-dir', dataDir], env, ['gateway', 'management']);
    try {
      const lines = node
        .output()
        .split('\n')
        .filter((line) => line.startsWith('gateway '));
      assert.deepEqual(lines, [`gateway    ${node.urls.gateway}/walkers/sandbox/`]);
    } finally {
      await node.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
