/**
 * Resource owner sign-ins on the native provider (consent page, password grant) go through the
 * shared SignInLimiter: 5 failures per account and address in 5 minutes, reserved before the user
 * registry is asked, so parallel guesses cannot slip past and a locked account's password is not
 * checked at all (the test's registry counts every check it answers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { basic, postForm, startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

describe('native OAuth provider: resource owner sign-in limits', () => {
  let o: OAuthPlatform;
  before(async () => {
    o = await startOAuthPlatform();
  });
  after(() => o.close());

  const password = (username: string, secret: string) =>
    postForm(
      `${o.issuer}/oauth2/token`,
      { grant_type: 'password', username, password: secret, scope: 'read' },
      basic(o.app.clientId, o.app.clientSecret),
    );

  async function consent(username: string, secret: string): Promise<Response> {
    const authorize = `${o.issuer}/oauth2/authorize`;
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: o.app.clientId,
      redirect_uri: o.redirectUri,
      scope: 'read',
    });
    const page = await fetch(`${authorize}?${query}`);
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
    const form = new URLSearchParams({
      ...Object.fromEntries(query),
      csrf,
      username,
      password: secret,
      decision: 'allow',
    });
    const headers = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
    return fetch(authorize, { method: 'POST', redirect: 'manual', headers, body: form });
  }

  test('ten parallel password-grant guesses: five reach the registry, five are refused unchecked', async () => {
    const before = o.registryCalls();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => password('mallory', `guess-${i}`)));
    assert.equal(o.registryCalls() - before, 5);
    assert.ok(
      answers.every((a) => a.status === 400 && a.body?.error === 'invalid_grant' && a.body.access_token === undefined),
    );
    const limited = answers.filter((a) => /too many sign-in attempts/.test(String(a.body?.error_description)));
    assert.equal(limited.length, 5);
    assert.match(limited[0].headers.get('retry-after') ?? '', /^\d+$/);
  });

  test('five wrong passwords on the consent page lock the owner there and on the password grant', async () => {
    const before = o.registryCalls();
    for (let i = 0; i < 5; i++) assert.equal((await consent('alice', `wrong-${i}`)).status, 401);
    const locked = await consent('alice', 'wonderland');
    assert.equal(locked.status, 429);
    assert.equal(locked.headers.get('location'), null);
    assert.match(await locked.text(), /Too many sign-in attempts; try again in \d+ seconds/);
    const grant = await password('alice', 'wonderland');
    assert.deepEqual([grant.status, grant.body?.error, grant.body?.access_token], [400, 'invalid_grant', undefined]);
    // The right password was never sent to the registry once the account was locked.
    assert.equal(o.registryCalls() - before, 5);
  });
});
