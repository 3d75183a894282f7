/**
 * The `user-security` assembly policy through a real gateway (issue 13) against a local
 * authentication-URL registry started here: basic and context-var identity extraction,
 * authentication by a registry the catalog enables, authorization `authenticated`, the stop
 * flags, the 503 when the registry cannot answer, the catchable error names, every unsupported
 * variant refused at import, an unknown registry refused at publish and by the gateway, and the
 * authenticated user read back from the activity log through the analytics API.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { DefinitionError } from '../../src/errors.ts';
import { UserRegistries } from '../../src/services/user-registries.ts';
import { secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { SecurityPlatform } from '../helpers/security-api.ts';

const good = `Basic ${Buffer.from('alice:alice-pass-1').toString('base64')}`;
const wrong = `Basic ${Buffer.from('alice:nope').toString('base64')}`;

let platform: SecurityPlatform;
let authServer: Server;
let calls = 0;

const echoUser = {
  'set-variable': { actions: [{ set: 'message.body', value: 'user=$(request.authenticated-credential)' }] },
};
type Block = Record<string, unknown>;

/** An open API (no security definitions) whose assembly runs `steps` then answers the user. */
const guarded = (steps: Block[], extra: Block = {}) =>
  secApi({ schemes: {}, ibm: { assembly: { execute: [...steps, echoUser], ...extra } } });
const userSecurity = (fields: Block): Block => ({
  'user-security': { version: '2.0.0', 'user-registry': 'staff', ...fields },
});

before(async () => {
  authServer = createServer((req, res) => {
    calls++;
    res.writeHead(req.headers.authorization === good ? 200 : 401).end();
  });
  await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));
  const authUrl = `http://127.0.0.1:${(authServer.address() as { port: number }).port}/check`;
  platform = await startSecurityPlatform();
  const registries = new UserRegistries(platform.t.platform.services);
  const orgId = platform.t.orgId;
  await registries.create(orgId, {
    name: 'staff',
    registry_type: 'authurl',
    configuration: { url: authUrl, timeout: 2 },
  });
  await registries.create(orgId, {
    name: 'down',
    registry_type: 'authurl',
    configuration: { url: 'http://127.0.0.1:1/', timeout: 1 },
  });
  await registries.create(orgId, {
    name: 'elsewhere',
    registry_type: 'authurl',
    configuration: { url: authUrl },
  });
  for (const name of ['staff', 'down']) await registries.enable(orgId, 'sandbox', name);
});
after(async () => {
  await platform?.close();
  authServer?.closeAllConnections();
  await new Promise((resolve) => authServer?.close(resolve));
});

const call = (headers: Record<string, string> = {}) => fetch(`${platform.base}/thing?n=1`, { headers });
const envelope = async (response: Response) => (await response.json()) as { httpCode: string; moreInformation: string };

describe('user-security with basic identity extraction', () => {
  test('no Authorization header: 401 UnauthorizedError with WWW-Authenticate naming the registry', async () => {
    await platform.publish(guarded([userSecurity({ 'extract-identity-method': 'basic' })]));
    const response = await call();
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="staff"');
    assert.match(
      (await envelope(response)).moreInformation,
      /^Invalid user name or password\. \(policy user-security\)$/,
    );
  });
  test('a password the registry refuses: 401', async () => {
    const response = await call({ authorization: wrong });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="staff"');
  });
  test('the right password: 200 with the user in request.authenticated-credential; the answer is cached', async () => {
    const before = calls;
    const first = await call({ authorization: good });
    assert.equal(first.status, 200);
    assert.equal(await first.text(), 'user=alice');
    assert.equal((await call({ authorization: good })).status, 200);
    assert.equal(calls, before + 1, 'the second call is answered from the bounded cache');
  });
  test('the authenticated user is in the activity log, read back through the analytics API', async () => {
    const response = await call({ authorization: good });
    const txId = response.headers.get('x-global-transaction-id');
    const deadline = Date.now() + 10_000;
    let event: Record<string, unknown> | undefined;
    while (event === undefined && Date.now() < deadline) {
      const { body } = await platform.t.call('GET', '/api/catalogs/sandbox/analytics/events?api=sec&limit=100');
      event = (body as Array<Record<string, unknown>>).find((e) => e.tx_id === txId);
      if (event === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(event, `no activity event for ${txId}`);
    assert.equal(event.user_name, 'alice');
  });
  test('a registry that cannot be reached: 503, never served open, whatever the stop flags', async () => {
    await platform.publish(
      guarded([userSecurity({ 'user-registry': 'down', 'au-stop-on-error': false, 'user-az-method': 'disabled' })]),
    );
    const response = await call({ authorization: good });
    assert.equal(response.status, 503);
    assert.match((await envelope(response)).moreInformation, /user registry/);
  });
});

describe('user-security with context-var identity extraction', () => {
  test('reads the user name and password from context variables a previous step set', async () => {
    const fromHeaders = {
      'set-variable': {
        actions: [
          { set: 'login.user', value: '$(request.headers.x-user)' },
          { set: 'login.pass', value: '$(request.headers.x-pass)' },
        ],
      },
    };
    const fields = {
      'extract-identity-method': 'context-var',
      'user-context-var': 'login.user',
      'pass-context-var': 'login.pass',
    };
    await platform.publish(guarded([fromHeaders, userSecurity(fields)]));
    const ok = await call({ 'x-user': 'alice', 'x-pass': 'alice-pass-1' });
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'user=alice');
    const refused = await call({ 'x-user': 'alice', 'x-pass': 'wrong' });
    assert.equal(refused.status, 401);
    assert.equal(
      refused.headers.get('www-authenticate'),
      null,
      'no Basic challenge when the identity is not read from Authorization',
    );
  });
});

describe('user-security stop flags, authorization and error names', () => {
  test('au-stop-on-error false: the flow goes on without an authenticated user', async () => {
    await platform.publish(guarded([userSecurity({ 'au-stop-on-error': false, 'user-az-method': 'disabled' })]));
    const response = await call({ authorization: wrong });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'user=');
  });
  test('authorization authenticated refuses a user nobody authenticated: 403 ForbiddenError', async () => {
    await platform.publish(guarded([userSecurity({ 'au-stop-on-error': false })]));
    const response = await call({ authorization: wrong });
    assert.equal(response.status, 403);
    assert.match((await envelope(response)).moreInformation, /^The user is not authorized to call this API\./);
  });
  test('a catch naming UnauthorizedError handles the refusal', async () => {
    const handler = { 'set-variable': { actions: [{ set: 'message.body', value: 'caught $(error.name)' }] } };
    await platform.publish(
      guarded([userSecurity({})], { catch: [{ errors: ['UnauthorizedError'], execute: [handler] }] }),
    );
    const response = await call({ authorization: wrong });
    assert.equal(await response.text(), 'caught UnauthorizedError');
  });
});

describe('user-security variants Portico does not run are refused, never skipped', () => {
  const refusedAt = async (fields: Block, path: string) => {
    await assert.rejects(platform.publish(guarded([userSecurity(fields)])), (error: unknown) => {
      assert.ok(error instanceof DefinitionError, String(error));
      const paths = error.problems.map((problem) => problem.path);
      assert.ok(
        paths.some((p) => p.endsWith(path)),
        `${path} not in ${paths.join(', ')}`,
      );
      return true;
    });
  };
  test('html-form and redirect identity extraction', async () => {
    await refusedAt({ 'extract-identity-method': 'html-form' }, 'user-security.extract-identity-method');
    await refusedAt(
      { 'extract-identity-method': 'redirect', 'redirect-url': '/x' },
      'user-security.extract-identity-method',
    );
  });
  test('inline auth-url and ldap authentication', async () => {
    await refusedAt({ 'user-auth-method': 'auth-url', 'auth-url': 'http://x/' }, 'user-security.user-auth-method');
    await refusedAt({ 'user-auth-method': 'ldap' }, 'user-security.user-auth-method');
  });
  test('html-form authorization', async () => {
    await refusedAt({ 'user-az-method': 'html-form' }, 'user-security.user-az-method');
  });
  test('context-var without pass-context-var; user-registry without a name or an identity', async () => {
    await refusedAt(
      { 'extract-identity-method': 'context-var', 'user-context-var': 'a.b' },
      'user-security.pass-context-var',
    );
    await refusedAt({ 'user-registry': '' }, 'user-security.user-registry');
    await refusedAt({ 'extract-identity-method': 'disabled' }, 'user-security.extract-identity-method');
  });
  test('an unknown field or version', async () => {
    await refusedAt({ 'made-up': true }, 'user-security.made-up');
    await refusedAt({ version: '1.0.0' }, 'user-security.version');
  });
  test('a registry the catalog does not enable is refused at publish', async () => {
    await assert.rejects(
      platform.publish(guarded([userSecurity({ 'user-registry': 'elsewhere' })])),
      (error: Error & { code?: string; params?: { rule?: string } }) => {
        assert.equal(error.code, 'DEF_INVALID');
        assert.equal(error.params?.rule, 'unknown-user-registry');
        return true;
      },
    );
  });
  test('a stored document naming a registry the catalog does not enable is not served: the gateway says why', async () => {
    await platform.publish(guarded([userSecurity({})]));
    await platform.store(guarded([userSecurity({ 'user-registry': 'nobody' })]));
    assert.equal((await call({ authorization: good })).status, 404);
    const failures = platform.t.platform.gateway!.current!.failures;
    assert.ok(
      failures.some((f) => f.api === 'sec:1.0.0' && /user registry nobody is not enabled/.test(f.reason)),
      JSON.stringify(failures),
    );
  });
});
