/**
 * Issue 12, finding 9: sign-in limits hold under concurrency. Thirty parallel wrong passwords
 * to the portal, the console and the management API's `POST /api/login`: each attempt is
 * reserved before its argon2 check, so at most the limit (5) are verified — answered 401 —
 * and the rest answer 429 with Retry-After. The three share one limiter.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { demo } from '../../src/cli/demo.ts';
import { defaultSignInLimits } from '../../src/web/sign-in-limiter.ts';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';
import { WebClient } from '../helpers/web-client.ts';

let running: RunningDemo;
const parallel = 30;
const limit = defaultSignInLimits.max;

before(async () => {
  running = await startPortalDemo();
  const { orgId } = await running.handle.platform.services.ensureOrg(demo.org);
  for (const username of ['limits-api', 'limits-shared']) {
    await running.handle.platform.services.addProviderUser(orgId, {
      username,
      email: '',
      password: 'limits-pass-123',
    });
  }
});

after(async () => {
  await running?.close();
});

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** Sends `parallel` wrong passwords at once through one form (same cookies and CSRF token). */
async function formStorm(base: string, page: string, fields: (i: number) => Record<string, string>) {
  const client = new WebClient(base);
  await client.get(page);
  const answers = await Promise.all(Array.from({ length: parallel }, (_, i) => client.post(page, fields(i))));
  return answers;
}

function apiLogin(username: string, password: string) {
  return fetch(`${running.management}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
}

test('issue-12: 30 parallel wrong portal passwords: at most 5 are checked, the rest answer 429', async () => {
  const wrong = (i: number) => ({ email: demo.developer.email, password: `wrong-password-${i}` });
  const answers = await formStorm(running.portal, '/sign-in', wrong);
  const counts = tally(answers.map((a) => a.status));
  assert.deepEqual(counts, { 401: limit, 429: parallel - limit });
  const blocked = answers.find((a) => a.status === 429)!;
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  assert.match(blocked.text, /Too many sign-in attempts/);
});

test('issue-12: 30 parallel wrong console passwords: at most 5 are checked, the rest answer 429', async () => {
  const wrong = (i: number) => ({ username: demo.provider.username, password: `wrong-${i}` });
  const answers = await formStorm(running.management, '/console/sign-in', wrong);
  const counts = tally(answers.map((a) => a.status));
  assert.deepEqual(counts, { 401: limit, 429: parallel - limit });
  assert.ok(Number(answers.find((a) => a.status === 429)!.headers.get('retry-after')) > 0);
});

test('issue-12: 30 parallel wrong POST /api/login: at most 5 are checked, the rest 429 with Retry-After', async () => {
  const answers = await Promise.all(Array.from({ length: parallel }, (_, i) => apiLogin('limits-api', `wrong-${i}`)));
  const counts = tally(answers.map((a) => a.status));
  assert.deepEqual(counts, { 401: limit, 429: parallel - limit });
  const blocked = answers.find((a) => a.status === 429)!;
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  const body = (await blocked.json()) as { error: { code: string } };
  assert.equal(body.error.code, 'MGMT_TOO_MANY_ATTEMPTS');
  const right = await apiLogin('limits-api', 'limits-pass-123');
  assert.equal(right.status, 429, 'the right password waits out the window too: the limit is not an oracle');
});

test('issue-12: the console and the management API share one limit per account', async () => {
  const client = new WebClient(running.management);
  await client.get('/console/sign-in');
  for (let i = 0; i < limit; i++) {
    const answer = await client.post('/console/sign-in', {
      username: 'limits-shared',
      password: `wrong-${i}`,
    });
    assert.equal(answer.status, 401);
  }
  const api = await apiLogin('limits-shared', 'limits-pass-123');
  assert.equal(api.status, 429);
});
