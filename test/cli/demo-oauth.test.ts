/**
 * The demo's OAuth part, the way the newcomer check runs it: `startDemo` (what `npm start` runs)
 * creates and enables examples/oauth/providers/demo-oauth.yaml, applies examples/oauth/, and each
 * printed curl line (getting a client credentials token; calling the warehouse API with it)
 * answers 200 when run by bash as printed. A second start on the same store duplicates nothing.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startDemo } from '../../src/cli/demo.ts';
import type { DemoHandle } from '../../src/cli/demo.ts';
import { loadSettings } from '../../src/config/config.ts';

function bash(line: string): Promise<{ code: string; body: string }> {
  return new Promise((resolve) => {
    execFile(
      'bash',
      ['-c', `${line} -sS -m 10 -w ' [%{http_code}]'`],
      { timeout: 30_000 },
      (_error, stdout, stderr) => {
        const code = /\[(\d{3})\]$/.exec(stdout)?.[1] ?? `none: ${stderr}`;
        resolve({ code, body: stdout });
      },
    );
  });
}

describe('demo: the OAuth-secured warehouse API and its printed curl lines', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-demo-oauth-'));
  const settings = loadSettings(
    {
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_DRAIN_SECONDS: '0',
    },
    { dataDir },
  );
  const start = () =>
    startDemo(settings, pino({ level: 'silent' }), { financing: 0, shipping: 0, geocoder: 0, inventory: 0 });
  let handle: DemoHandle;
  before(async () => {
    handle = await start();
  });
  after(async () => {
    await handle?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the token line and the Bearer call line both answer 200 as printed', async () => {
    const [tokenLine, callLine] = handle.curlLines.slice(-2);
    assert.match(
      tokenLine,
      /^curl -u '[0-9a-f]+:\S+' -d grant_type=client_credentials -d scope=stock:read '.*\/oauth\/oauth2\/token'$/,
    );
    const token = await bash(tokenLine);
    assert.equal(token.code, '200', token.body);
    assert.match(token.body, /"scope":"stock:read"/);
    assert.match(callLine, /^curl -H "Authorization: Bearer \$\(curl -s /);
    const call = await bash(callLine);
    assert.equal(call.code, '200', call.body);
    assert.match(call.body, /^\[/, 'the inventory items, a JSON array');
    // Without the token the API is refused: it is the token that let the call through.
    const bare = await bash(`curl '${callLine.split("'").at(-2)}'`);
    assert.equal(bare.code, '401');
  });

  test('a second start on the same store reuses the provider and prints a placeholder for the secret', async () => {
    await handle.close();
    handle = await start();
    const providers = await handle.platform.services.store.db.selectFrom('oauth_providers').select('name').execute();
    assert.deepEqual(
      providers.map((p) => p.name),
      ['demo-oauth'],
    );
    assert.match(handle.curlLines.at(-2)!, /:<client secret>'/);
  });
});
