import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { runPortico as portico } from '../helpers/processes.ts';

const providerFile = (title: string, ttl: number) =>
  `name: cli-oauth\ntitle: ${title}\ngrants: [application]\nscopes:\n  read: Read things\n  write: Change things\n` +
  `native_provider:\n  api: { basePath: /cli-oauth }\n  access_token_ttl: ${ttl}\n`;

describe('portico oauth-providers against a running management server', () => {
  let t: TestPlatform;
  let env: Record<string, string>;
  let dir: string;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    dir = mkdtempSync(join(tmpdir(), 'portico-oauth-cli-'));
    env = { PORTICO_CONFIG: join(dir, 'credentials.json'), HOME: dir };
    const login = await portico(
      ['login', '--server', t.management, '--username', 'admin', '--password', adminPassword],
      env,
    );
    assert.equal(login.code, 0, login.stderr);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('create, list, get (text and --json), update, rotate-key, enable, disable and delete', async () => {
    const file = join(dir, 'cli-oauth.yaml');
    writeFileSync(file, providerFile('CLI OAuth', 600));
    const create = await portico(['oauth-providers', 'create', file], env);
    assert.equal(create.stdout, 'created OAuth provider cli-oauth (/cli-oauth)\n', create.stderr);
    const list = await portico(['oauth-providers', 'list'], env);
    assert.equal(list.stdout, 'cli-oauth\t/cli-oauth\tapplication\tread write\tCLI OAuth\n');
    const get = await portico(['oauth-providers', 'get', 'cli-oauth'], env);
    assert.match(get.stdout, /^grants: application$/m);
    assert.match(get.stdout, /^scope write: Change things$/m);
    const json = JSON.parse((await portico(['oauth-providers', 'get', 'cli-oauth', '--json'], env)).stdout);
    assert.equal(json.native_provider.access_token_ttl, 600);

    writeFileSync(file, providerFile('CLI OAuth 2', 900));
    assert.equal(
      (await portico(['oauth-providers', 'update', file], env)).stdout,
      'updated OAuth provider cli-oauth\n',
    );
    const listed = JSON.parse((await portico(['oauth-providers', 'list', '--json'], env)).stdout);
    assert.deepEqual([listed[0].title, listed[0].native_provider.access_token_ttl], ['CLI OAuth 2', 900]);

    const rotated = await portico(['oauth-providers', 'rotate-key', 'cli-oauth'], env);
    assert.match(rotated.stdout, /^OAuth provider cli-oauth signs with key \S+\n$/, rotated.stderr);

    const enable = await portico(['oauth-providers', 'enable', 'cli-oauth', '--catalog', 'sandbox'], env);
    assert.equal(enable.stdout, 'OAuth provider cli-oauth is enabled in sandbox\n', enable.stderr);
    assert.match((await portico(['oauth-providers', 'list', '--catalog', 'sandbox'], env)).stdout, /^cli-oauth\t/m);
    const disable = await portico(['oauth-providers', 'disable', 'cli-oauth', '--catalog', 'sandbox'], env);
    assert.equal(disable.stdout, 'OAuth provider cli-oauth is disabled in sandbox\n');
    assert.equal((await portico(['oauth-providers', 'list', '--catalog', 'sandbox'], env)).stdout, '');

    assert.equal(
      (await portico(['oauth-providers', 'delete', 'cli-oauth'], env)).stdout,
      'deleted OAuth provider cli-oauth\n',
    );
    const gone = await portico(['oauth-providers', 'get', 'cli-oauth'], env);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^portico: .*cli-oauth/);
  });

  test('an invalid provider file: one line naming the field, exit 1, nothing created', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ name: 'bad-oauth', grants: ['implicit'], scopes: { read: 'Read' } }));
    const run = await portico(['oauth-providers', 'create', file], env);
    assert.equal(run.code, 1);
    assert.equal(run.stderr.trim().split('\n').length, 1);
    assert.match(run.stderr, /grants/);
    assert.equal((await portico(['oauth-providers', 'list'], env)).stdout, '');
  });
});
