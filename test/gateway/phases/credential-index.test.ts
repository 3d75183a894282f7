/**
 * The credential index at reload (issue 18): with some apps read again, the previous index is
 * patched entry by entry, giving the event loop turns when the slice is spent, and keeps every
 * other app's entry as the same object.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentialIndex, interner } from '../../../src/gateway/credentials.ts';
import type { SnapshotData } from '../../../src/store/snapshot-data.ts';
import { TimeSlices } from '../../../src/time-slices.ts';
import { shopData } from './fixture.ts';

function appsData(count: number, secretOf: (i: number) => string): SnapshotData {
  const data = shopData();
  data.apps = Array.from({ length: count }, (_, i) => ({
    id: `app-${i}`,
    title: `App ${i}`,
    consumer_org_id: 'co-1',
    consumer_org_name: 'buyers',
    consumer_org_title: 'Buyers',
  }));
  data.credentials = data.apps.map((app, i) => ({
    client_id: `client-${i}`,
    secret_hash: secretOf(i),
    app_id: app.id,
  }));
  return data;
}

test('an app read again replaces its entry; the others are kept, with turns taken on the way', async () => {
  const previous = await credentialIndex(
    appsData(5000, () => 'old'),
    interner(),
  );
  const changed = appsData(5000, () => 'new');
  changed.apps = [changed.apps[7]];
  changed.credentials = [changed.credentials[7]];
  changed.appsOf = new Set(['app-7', 'app-9']); // app-9 was read again and is gone (deleted)
  const slices = new TimeSlices(0);
  const patched = await credentialIndex(changed, interner(), previous, slices);
  assert.equal(patched.size, 4999);
  assert.equal(patched.get('client-7')?.secretHash, 'new');
  assert.equal(patched.get('client-9'), undefined);
  assert.equal(patched.get('client-8'), previous.get('client-8'), 'kept, not rebuilt');
  assert.ok(slices.turns >= 4, `one turn per 1 024 entries at most (${slices.turns})`);
});
