/**
 * Provider user roles over HTTP on a real platform: each role's allowed and refused routes
 * (the table of docs/management.md), and the route table's own rule that every route names a
 * permission which the server enforces.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { routes } from '../../src/management/routes.ts';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

type Role = 'owner' | 'administrator' | 'developer' | 'community-manager' | 'viewer';
const roles: Role[] = ['owner', 'administrator', 'developer', 'community-manager', 'viewer'];
const password = 'role-pass-1234';

/** What each role may change, as docs/management.md says; every role may read everything. */
const manages: Record<Role, string[]> = {
  owner: ['apis', 'products', 'catalogs', 'consumers', 'subscriptions', 'oauth-providers', 'user-registries', 'users'],
  administrator: [
    'apis',
    'products',
    'catalogs',
    'consumers',
    'subscriptions',
    'oauth-providers',
    'user-registries',
    'users',
  ],
  developer: ['apis', 'products', 'oauth-providers', 'user-registries'],
  'community-manager': ['consumers', 'subscriptions'],
  viewer: [],
};

/** One call per permission; a caller who has it gets past the check (a 2xx, or the handler's 400/404). */
const probes: Array<{ permission: string; method: string; path: string; body?: unknown }> = [
  { permission: 'apis:view', method: 'GET', path: '/api/apis' },
  { permission: 'apis:manage', method: 'POST', path: '/api/apis', body: {} },
  { permission: 'apis:manage', method: 'DELETE', path: '/api/apis/nothing/1.0.0' },
  { permission: 'products:view', method: 'GET', path: '/api/catalogs/sandbox/products' },
  { permission: 'products:manage', method: 'POST', path: '/api/catalogs/sandbox/products/nothing/1.0.0/publish' },
  { permission: 'catalogs:view', method: 'GET', path: '/api/catalogs' },
  { permission: 'catalogs:manage', method: 'POST', path: '/api/catalogs', body: {} },
  { permission: 'consumers:view', method: 'GET', path: '/api/catalogs/sandbox/consumer-orgs' },
  { permission: 'consumers:manage', method: 'POST', path: '/api/catalogs/sandbox/consumer-orgs', body: {} },
  { permission: 'subscriptions:view', method: 'GET', path: '/api/catalogs/sandbox/subscriptions' },
  { permission: 'subscriptions:manage', method: 'POST', path: '/api/catalogs/sandbox/subscriptions/nothing/approve' },
  { permission: 'analytics:view', method: 'GET', path: '/api/catalogs/sandbox/analytics/events' },
  { permission: 'oauth-providers:view', method: 'GET', path: '/api/orgs/acme/oauth-providers' },
  { permission: 'oauth-providers:manage', method: 'POST', path: '/api/orgs/acme/oauth-providers', body: {} },
  { permission: 'user-registries:view', method: 'GET', path: '/api/orgs/acme/user-registries' },
  { permission: 'user-registries:manage', method: 'POST', path: '/api/orgs/acme/user-registries', body: {} },
  { permission: 'users:view', method: 'GET', path: '/api/users' },
  { permission: 'users:manage', method: 'POST', path: '/api/users', body: {} },
  { permission: 'users:manage', method: 'DELETE', path: '/api/users/nobody' },
  { permission: 'signed-in', method: 'GET', path: '/api/me' },
  { permission: 'signed-in', method: 'GET', path: '/api/tokens' },
];

function allowed(role: Role, permission: string): boolean {
  if (permission === 'signed-in' || permission.endsWith(':view')) return true;
  return manages[role].includes(permission.replace(/:manage$/, ''));
}

describe('provider roles', () => {
  let t: TestPlatform;
  const tokens = {} as Record<Role, string>;
  before(async () => {
    t = await startTestPlatform({ role: 'management' });
    for (const role of roles) {
      const username = `as-${role}`;
      await t.platform.services.addProviderUser(t.orgId, { username, email: '', password, role });
      const login = await t.call('POST', '/api/login', { username, password }, null);
      assert.equal(login.status, 200);
      tokens[role] = login.body.token;
    }
  });
  after(async () => {
    await t.close();
  });

  for (const role of roles) {
    for (const probe of probes) {
      const expected = allowed(role, probe.permission);
      test(`${role} ${expected ? 'may' : 'may not'} ${probe.method} ${probe.path} (${probe.permission})`, async () => {
        const answer = await t.call(probe.method, probe.path, probe.body, tokens[role]);
        if (expected) {
          assert.ok(answer.status < 500 && answer.status !== 403 && answer.status !== 401, `got ${answer.status}`);
        } else {
          assert.equal(answer.status, 403);
          assert.equal(answer.body.error.code, 'MGMT_FORBIDDEN');
          assert.match(answer.body.error.message, new RegExp(`permission ${probe.permission}\\b`));
          assert.match(answer.body.error.message, new RegExp(`role ${role}\\b`));
        }
      });
    }
  }

  test('GET /api/me names the role and its permissions', async () => {
    const me = await t.call('GET', '/api/me', undefined, tokens['community-manager']);
    assert.equal(me.body.role, 'community-manager');
    assert.ok(me.body.permissions.includes('subscriptions:manage'));
    assert.ok(!me.body.permissions.includes('apis:manage'));
  });

  test('every route of the table names a permission, and the server enforces it on every one', async () => {
    const table = routes(t.platform.services, { sessionTtlMs: 60_000, maxDays: 90 });
    const known = new Set([...probes.map((p) => p.permission), 'public']);
    for (const route of table) {
      assert.ok(known.has(route.permission), `${route.method} ${route.url} names no known permission`);
      if (route.permission === 'public') continue;
      const path = route.url.replace(':org', 'acme').replace(/:(\w+)/g, 'x');
      const anonymous = await t.call(route.method, path, route.body ? {} : undefined, null);
      assert.equal(anonymous.status, 401, `${route.method} ${route.url} without a token`);
      if (route.permission === 'signed-in' || route.permission.endsWith(':view')) continue;
      const viewer = await t.call(route.method, path, route.body ? {} : undefined, tokens.viewer);
      assert.equal(viewer.status, 403, `${route.method} ${route.url} as a viewer`);
      assert.match(viewer.body.error.message, new RegExp(route.permission));
    }
  });

  test('a route that changes something needs a :manage permission; only the caller’s own account is exempt', () => {
    // What a signed-in user may change of its own: sign out, its password, its tokens. Anything else
    // that is not a GET must name a `:manage` permission, so a viewer can change nothing.
    const ownAccount = new Set([
      'POST /api/login',
      'POST /api/logout',
      'PUT /api/me/password',
      'DELETE /api/tokens/:id',
    ]);
    for (const route of routes(t.platform.services, { sessionTtlMs: 60_000, maxDays: 90 })) {
      const key = `${route.method} ${route.url}`;
      if (route.method === 'GET') {
        assert.ok(route.permission !== 'public', `${key} is readable without signing in`);
        continue;
      }
      if (ownAccount.has(key)) continue;
      assert.match(route.permission, /:manage$/, `${key} changes something with the permission ${route.permission}`);
    }
  });

  test('the OpenAPI document shows each route’s permission', async () => {
    const { body } = await t.call('GET', '/api/openapi.json', undefined, null);
    assert.equal(body.paths['/api/users'].post['x-portico-permission'], 'users:manage');
    assert.equal(body.paths['/api/apis'].get['x-portico-permission'], 'apis:view');
  });
});
