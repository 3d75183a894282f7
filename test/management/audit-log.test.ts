/** Every state change through the management API and the console leaves a line naming who made it. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { createConsolePlugin } from '../../src/management/console/plugin.ts';
import { createManagementServer } from '../../src/management/server.ts';
import { ProviderServices } from '../../src/services/provider-services.ts';
import { sqliteTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

interface AuditLine {
  part: string;
  msg: string;
  user: string | null;
  method: string;
  route: string;
  params: Record<string, string>;
  status: number;
}

describe('audit log of management changes', () => {
  let db: TestStore;
  let app: FastifyInstance;
  let token: string;
  const lines: string[] = [];
  const audit = () =>
    lines
      .map((line) => JSON.parse(line) as AuditLine)
      .filter((line) => line.part === 'audit' && line.msg === 'management change');

  before(async () => {
    db = await sqliteTestStore();
    const services = new ProviderServices(db.store);
    const { orgId } = await services.ensureOrg('acme');
    await services.addProviderUser(orgId, { username: 'ops', email: '', password: 'ops-pass-1234' });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const sessionTtlMs = 3600_000;
    const plugins = [createConsolePlugin({ services, sessionTtlMs })];
    app = await createManagementServer({ services, logger, sessionTtlMs, plugins });
    const login = await app.inject({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'ops', password: 'ops-pass-1234' },
    });
    token = login.json<{ token: string }>().token;
  });
  after(async () => {
    await app.close();
    await db.dispose();
  });

  test('a change names the user, the route with its parameters and the answer, never the body', async () => {
    lines.length = 0;
    const answer = await app.inject({
      method: 'POST',
      url: '/api/catalogs/sandbox/subscriptions/no-such-id/revoke',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(answer.statusCode, 404);
    const added = await app.inject({
      method: 'POST',
      url: '/api/users',
      headers: { authorization: `Bearer ${token}` },
      payload: { username: 'second', password: 'second-pass-1234' },
    });
    assert.equal(added.statusCode, 201);
    const [revoke, user] = audit();
    assert.equal(revoke.user, 'ops');
    assert.equal(revoke.route, '/api/catalogs/:catalog/subscriptions/:id/revoke');
    assert.deepEqual({ ...revoke.params }, { catalog: 'sandbox', id: 'no-such-id' });
    assert.equal(revoke.status, 404, 'refused changes are logged too');
    assert.equal(user.user, 'ops');
    assert.equal(user.status, 201);
    assert.doesNotMatch(lines.join('\n'), /second-pass-1234/, 'bodies (passwords) stay out of the log');
  });

  test('reads leave no line; a sign-in leaves one without its password', async () => {
    lines.length = 0;
    await app.inject({ method: 'GET', url: '/api/apis', headers: { authorization: `Bearer ${token}` } });
    await app.inject({ method: 'POST', url: '/api/login', payload: { username: 'ops', password: 'wrong-pass-1234' } });
    const entries = audit();
    assert.deepEqual(
      entries.map((e) => [e.method, e.route, e.status, e.user]),
      [['POST', '/api/login', 401, null]],
    );
    assert.doesNotMatch(lines.join('\n'), /wrong-pass-1234/);
  });

  test('a console change names the signed-in user', async () => {
    const signInPage = await app.inject({ method: 'GET', url: '/console/sign-in' });
    const pre = signInPage.cookies.find((c) => c.name === 'portico_console_pre')!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(signInPage.body)![1];
    const signIn = await app.inject({
      method: 'POST',
      url: '/console/sign-in',
      cookies: { portico_console_pre: pre.value },
      payload: { _csrf: csrf, username: 'ops', password: 'ops-pass-1234', next: '/console' },
    });
    assert.equal(signIn.statusCode, 303);
    const session = signIn.cookies.find((c) => c.name === 'portico_console')!;
    const page = await app.inject({ method: 'GET', url: '/console', cookies: { portico_console: session.value } });
    const sessionCsrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1];
    lines.length = 0;
    const signOut = await app.inject({
      method: 'POST',
      url: '/console/sign-out',
      cookies: { portico_console: session.value },
      payload: { _csrf: sessionCsrf },
    });
    assert.equal(signOut.statusCode, 303);
    assert.deepEqual(
      audit().map((e) => [e.route, e.user, e.status]),
      [['/console/sign-out', 'ops', 303]],
    );
  });
});
