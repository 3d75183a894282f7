/**
 * What a refresh token is bound to, on SQLite and PostgreSQL. RFC 6749 §6: a grant issued to a
 * confidential client (password grant, or a code exchanged with the client secret) refreshes only
 * with the client authenticated, even where the provider accepts public clients; a public PKCE
 * grant refreshes with the client id alone. And a revoked grant's access tokens stay refused until
 * they expire, even after the provider's access_token_ttl was lowered below their lifetime.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { hashToken } from '../../src/store/secrets.ts';
import { pgServerUrl } from '../helpers/stores.ts';
import { basic, consentCode, postForm, providerFile, startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

const verifier = 'r'.repeat(43) + 'efresh-binding-0123';
const challenge = createHash('sha256').update(verifier).digest('base64url');

async function adminQuery(text: string): Promise<void> {
  const admin = new pg.Client({ connectionString: pgServerUrl });
  await admin.connect();
  try {
    await admin.query(text);
  } finally {
    await admin.end();
  }
}

const database = `portico_refresh_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const backends = [
  { name: 'SQLite', env: async () => ({}), drop: async () => {} },
  {
    name: 'PostgreSQL',
    async env() {
      await adminQuery(`create database ${database}`);
      const url = new URL(pgServerUrl);
      url.pathname = `/${database}`;
      return { PORTICO_DATABASE_URL: url.toString() };
    },
    drop: () => adminQuery(`drop database if exists ${database} with (force)`),
  },
];

for (const backend of backends) {
  describe(`native OAuth refresh tokens: client binding and grant revocation (${backend.name})`, () => {
    let o: OAuthPlatform;
    let token: string;
    let secret: Record<string, string>;

    before(async () => {
      o = await startOAuthPlatform(await backend.env());
      token = `${o.issuer}/oauth2/token`;
      secret = basic(o.app.clientId, o.app.clientSecret);
    });
    after(async () => {
      await o?.close();
      await backend.drop();
    });

    const callApi = async (access: unknown) =>
      (await fetch(`${o.p.base}/thing?n=1`, { headers: { authorization: `Bearer ${String(access)}` } })).status;
    const refresh = (refreshToken: unknown, headers: Record<string, string> = {}, fields = {}) =>
      postForm(token, { grant_type: 'refresh_token', refresh_token: String(refreshToken), ...fields }, headers);
    const withoutSecret = (refreshToken: unknown) => refresh(refreshToken, {}, { client_id: o.app.clientId });
    const passwordGrant = () =>
      postForm(token, { grant_type: 'password', username: 'alice', password: 'wonderland', scope: 'read' }, secret);

    function assertInvalidClient(answer: Awaited<ReturnType<typeof postForm>>) {
      assert.equal(answer.status, 401);
      assert.equal(answer.body?.error, 'invalid_client');
      assert.match(answer.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      assert.equal(answer.body?.access_token, undefined);
    }

    test('a password grant refreshes only with the client secret; the refused request uses nothing', async () => {
      const first = await passwordGrant();
      assert.equal(first.status, 200);
      assertInvalidClient(await withoutSecret(first.body!.refresh_token));
      // The refusal did not use the token: with the secret it still refreshes (no reuse detected).
      const second = await refresh(first.body!.refresh_token, secret);
      assert.equal(second.status, 200);
      assert.equal(await callApi(second.body!.access_token), 200);
      // The rotated token is bound the same way.
      assertInvalidClient(await withoutSecret(second.body!.refresh_token));
      const posted = { client_id: o.app.clientId, client_secret: o.app.clientSecret };
      assert.equal((await refresh(second.body!.refresh_token, {}, posted)).status, 200);
    });

    test('a code exchanged with the client secret is a confidential grant, PKCE or not', async () => {
      const code = await consentCode(o, { code_challenge: challenge, code_challenge_method: 'S256' });
      const exchanged = await postForm(
        token,
        { grant_type: 'authorization_code', code, redirect_uri: o.redirectUri, code_verifier: verifier },
        secret,
      );
      assert.equal(exchanged.status, 200);
      assertInvalidClient(await withoutSecret(exchanged.body!.refresh_token));
      assert.equal((await refresh(exchanged.body!.refresh_token, secret)).status, 200);
    });

    test('a public PKCE grant refreshes with the client id alone, rotation after rotation', async () => {
      const code = await consentCode(o, { code_challenge: challenge, code_challenge_method: 'S256' });
      const exchanged = await postForm(token, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: o.redirectUri,
        code_verifier: verifier,
        client_id: o.app.clientId,
      });
      assert.equal(exchanged.status, 200);
      const second = await withoutSecret(exchanged.body!.refresh_token);
      assert.equal(second.status, 200);
      const third = await withoutSecret(second.body!.refresh_token);
      assert.equal(third.status, 200);
      assert.equal(await callApi(third.body!.access_token), 200);
    });

    test('a refresh token stored before the public_client column reads as confidential (fail-closed)', async () => {
      const code = await consentCode(o, { code_challenge: challenge, code_challenge_method: 'S256' });
      const exchanged = await postForm(token, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: o.redirectUri,
        code_verifier: verifier,
        client_id: o.app.clientId,
      });
      const hash = hashToken(String(exchanged.body!.refresh_token));
      // What migration 0013 gives a row issued before it: 0, the column's default.
      const { db } = o.p.t.platform.services.store;
      await db.updateTable('oauth_refresh_tokens').set({ public_client: 0 }).where('token_hash', '=', hash).execute();
      assertInvalidClient(await withoutSecret(exchanged.body!.refresh_token));
      assert.equal((await refresh(exchanged.body!.refresh_token, secret)).status, 200);
    });

    // Found by a review (Session 15): refresh tokens issued before an admin turned refresh
    // tokens off kept yielding access tokens.
    test('refresh tokens turned off: one issued before is refused, and works again once they are back on', async () => {
      const first = await passwordGrant();
      assert.equal(first.status, 200);
      const setRefresh = async (enabled: boolean) => {
        const native = {
          ...providerFile.native_provider,
          refresh_token: { ...providerFile.native_provider.refresh_token, enabled },
        };
        const put = await o.p.t.call('PUT', '/api/orgs/acme/oauth-providers/demo-oauth', {
          ...providerFile,
          native_provider: native,
        });
        assert.equal(put.status, 200);
        await o.p.t.platform.gateway!.reload();
      };
      await setRefresh(false);
      try {
        const refused = await refresh(first.body!.refresh_token, secret);
        assert.equal(refused.status, 400);
        assert.equal(refused.body?.error, 'unsupported_grant_type');
      } finally {
        await setRefresh(true);
      }
      assert.equal((await refresh(first.body!.refresh_token, secret)).status, 200);
    });

    test("a revoked grant's access token stays refused after access_token_ttl was lowered", async () => {
      const gateway = o.p.t.platform.gateway!;
      const setTtl = async (ttl: number) => {
        const native = { ...providerFile.native_provider, access_token_ttl: ttl };
        const put = await o.p.t.call('PUT', '/api/orgs/acme/oauth-providers/demo-oauth', {
          ...providerFile,
          native_provider: native,
        });
        assert.equal(put.status, 200);
        await gateway.reload();
      };
      const first = await passwordGrant(); // under the file's access_token_ttl, 3600 s
      const access = String(first.body!.access_token);
      const { exp, grant_id } = JSON.parse(Buffer.from(access.split('.')[1], 'base64url').toString()) as {
        exp: number;
        grant_id: string;
      };
      assert.equal(await callApi(access), 200);
      await setTtl(1);
      try {
        assert.equal((await refresh(first.body!.refresh_token, secret)).status, 200); // rotates
        const reuse = await refresh(first.body!.refresh_token, secret); // reuse: the grant is revoked
        assert.equal(reuse.body?.error, 'invalid_grant');
        await gateway.reload();
        assert.equal(await callApi(access), 401);
        const { db } = o.p.t.platform.services.store;
        const row = await db
          .selectFrom('oauth_revocations')
          .select('expires_at')
          .where('token_id', '=', grant_id)
          .executeTakeFirstOrThrow();
        assert.ok(Number(row.expires_at) >= exp, 'the revocation outlasts the access token it revokes');
        // Past the current TTL (1 s), where the old revocation ended: still refused.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        await gateway.reload();
        assert.equal(await callApi(access), 401);
      } finally {
        await setTtl(providerFile.native_provider.access_token_ttl);
      }
    });
  });
}
