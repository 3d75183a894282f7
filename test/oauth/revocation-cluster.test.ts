/**
 * Revocation reaches every gateway node (issue 14): two gateways on one PostgreSQL database (a
 * fresh one for this test); a token revoked at node A's revocation endpoint is refused by node B
 * within about a second, through the change feed (NOTIFY) and B's next snapshot, with no
 * database read on B's request path.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform } from '../../src/platform.ts';
import { pgServerUrl } from '../helpers/stores.ts';
import { basic, postForm, startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

describe('native OAuth revocation across gateway nodes (PostgreSQL)', () => {
  const database = `portico_oauth_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = new URL(pgServerUrl);
  url.pathname = `/${database}`;
  let a: OAuthPlatform;
  let b: Platform;
  let dataDir: string;

  before(async () => {
    const admin = new pg.Client({ connectionString: pgServerUrl });
    await admin.connect();
    await admin.query(`create database ${database}`);
    await admin.end();
    a = await startOAuthPlatform({ PORTICO_DATABASE_URL: url.toString() });
    dataDir = mkdtempSync(join(tmpdir(), 'portico-oauth-b-'));
    const settings = loadSettings(
      { PORTICO_GATEWAY_PORT: '0', PORTICO_DRAIN_SECONDS: '0', PORTICO_DATABASE_URL: url.toString() },
      { dataDir },
    );
    b = await startPlatform(settings, pino({ level: 'silent' }), 'gateway');
  });
  after(async () => {
    await b?.close();
    await a?.close();
    rmSync(dataDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: pgServerUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  });

  test('a token revoked on node A is refused on node B within ~1 s', async (t) => {
    const auth = basic(a.app.clientId, a.app.clientSecret);
    const issued = await postForm(
      `${a.issuer}/oauth2/token`,
      { grant_type: 'client_credentials', scope: 'read' },
      auth,
    );
    const token = String(issued.body!.access_token);
    const onB = `${b.urls.gateway}/acme/sandbox/sec/thing?n=1`;
    const statusOnB = async () => (await fetch(onB, { headers: { authorization: `Bearer ${token}` } })).status;
    const deadline = Date.now() + 5000;
    while ((await statusOnB()) !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await statusOnB(), 200, 'node B serves the token before the revocation');

    assert.equal((await postForm(`${a.issuer}/oauth2/revoke`, { token }, auth)).status, 200);
    const started = Date.now();
    while ((await statusOnB()) !== 401 && Date.now() - started < 3000) await new Promise((r) => setTimeout(r, 25));
    const elapsed = Date.now() - started;
    assert.equal(await statusOnB(), 401);
    assert.ok(elapsed < 1500, `refused on node B after ${elapsed} ms`);
    t.diagnostic(`refused on node B ${elapsed} ms after the revocation answered`);
  });
});
