/**
 * `portico users` with roles, `portico password` and `portico tokens` against a real
 * management server, through the CLI's own process.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminPassword, startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';
import { runPortico as portico } from '../helpers/processes.ts';

describe('portico users, password and tokens', () => {
  let t: TestPlatform;
  let dir: string;
  const as = (name: string) => ({ PORTICO_CONFIG: join(dir, `${name}.json`), HOME: dir });
  const login = (name: string, password: string) =>
    portico(['login', '--server', t.management, '--username', name, '--password', password], as(name));

  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    dir = mkdtempSync(join(tmpdir(), 'portico-cli-users-'));
    assert.equal((await login('admin', adminPassword)).code, 0);
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('users add --role, list with roles, set-role, and a refusal naming the permission', async () => {
    const add = await portico(
      ['users', 'add', 'auditor', '--password', 'auditor-pass-1', '--role', 'viewer'],
      as('admin'),
    );
    assert.equal(add.stdout, 'added provider user auditor\n', add.stderr);
    assert.match((await portico(['users', 'list'], as('admin'))).stdout, /^auditor\t\tviewer$/m);
    assert.equal((await login('auditor', 'auditor-pass-1')).code, 0);
    const refused = await portico(['users', 'add', 'sneaky', '--password', 'sneaky-pass-1'], as('auditor'));
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    assert.match(refused.stderr, /permission users:manage.*role viewer/);
    const promote = await portico(['users', 'set-role', 'auditor', 'community-manager'], as('admin'));
    assert.equal(promote.stdout, 'provider user auditor is now community-manager\n', promote.stderr);
    const bad = await portico(['users', 'set-role', 'auditor', 'king'], as('admin'));
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /role: must be one of: owner, administrator/);
  });

  test('tokens list marks the CLI’s own token; revoke ends another one', async () => {
    const other = { ...as('admin'), PORTICO_CONFIG: join(dir, 'admin-2.json') };
    assert.equal(
      (await portico(['login', '--server', t.management, '--username', 'admin', '--password', adminPassword], other))
        .code,
      0,
    );
    const list = await portico(['tokens', 'list', '--json'], as('admin'));
    const tokens = JSON.parse(list.stdout) as Array<{ id: string; current: boolean }>;
    assert.equal(tokens.filter((x) => x.current).length, 1);
    const table = await portico(['tokens', 'list'], as('admin'));
    assert.match(table.stdout, /\t\*$/m);
    const victim = JSON.parse((await portico(['tokens', 'list', '--json'], other)).stdout).find(
      (x: { current: boolean }) => x.current,
    );
    const revoke = await portico(['tokens', 'revoke', victim.id], as('admin'));
    assert.equal(revoke.stdout, `revoked token ${victim.id}\n`, revoke.stderr);
    const after = await portico(['whoami'], other);
    assert.equal(after.code, 1);
    assert.equal((await portico(['whoami'], as('admin'))).code, 0);
  });

  test('password changes the password and ends the other sessions; users remove ends the user', async () => {
    assert.equal((await portico(['users', 'add', 'mover', '--password', 'mover-pass-1'], as('admin'))).code, 0);
    assert.equal((await login('mover', 'mover-pass-1')).code, 0);
    const second = { ...as('mover'), PORTICO_CONFIG: join(dir, 'mover-2.json') };
    await portico(['login', '--server', t.management, '--username', 'mover', '--password', 'mover-pass-1'], second);
    const wrong = await portico(['password', '--current', 'nope-nope-1', '--new', 'mover-pass-2'], as('mover'));
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /currentPassword/);
    const changed = await portico(['password', '--current', 'mover-pass-1', '--new', 'mover-pass-2'], as('mover'));
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal((await portico(['whoami'], second)).code, 1);
    assert.equal((await portico(['whoami'], as('mover'))).code, 0);
    const removed = await portico(['users', 'remove', 'mover'], as('admin'));
    assert.equal(removed.stdout, 'removed provider user mover\n', removed.stderr);
    assert.equal((await portico(['whoami'], as('mover'))).code, 1);
    const last = await portico(['users', 'remove', 'admin'], as('admin'));
    assert.equal(last.code, 1);
    assert.match(last.stderr, /last owner/);
  });
});
