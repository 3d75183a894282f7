/**
 * Issue 12, finding 13: the SQLite store holds password, session and secret hashes, so its
 * file, its -wal and -shm files are created 0600 and a folder it creates 0700 — checked on the
 * real files after writes, under the permissive umask 022 that made them 0644 before.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOrg } from '../../src/store/orgs.ts';
import { openStore } from '../../src/store/store.ts';

const root = mkdtempSync(join(tmpdir(), 'portico-modes-'));

after(() => {
  rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;

test('issue-12: a new store folder is 0700 and portico.db, -wal and -shm are 0600', async () => {
  const previous = process.umask(0o022);
  try {
    const folder = join(root, 'new', 'data');
    const file = join(folder, 'portico.db');
    const store = await openStore(`sqlite:${file}`);
    await createOrg(store.db, { name: 'modes', title: 'Modes' });
    for (const path of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(path).toString(8), '600', path);
    assert.equal(mode(folder).toString(8), '700');
    await store.close();
  } finally {
    process.umask(previous);
  }
});

test('issue-12: an existing world-readable store file is tightened to 0600 when opened', async () => {
  const file = join(root, 'old.db');
  writeFileSync(file, '');
  chmodSync(file, 0o644);
  const store = await openStore(`sqlite:${file}`);
  await createOrg(store.db, { name: 'old', title: 'Old' });
  assert.equal(mode(file).toString(8), '600');
  assert.equal(mode(`${file}-wal`).toString(8), '600');
  await store.close();
});
