/** The management API's sign-in: a provider user's bearer token (`/api/login`, `/api/logout`, `/api/me`). */
import type { ProviderServices } from '../services/provider-services.ts';
import { rolePermissions } from '../services/provider/roles.ts';
import { bearer, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The sign-in routes; a bearer token lasts 90 times as long as a console session. */
export function authRoutes(services: ProviderServices, sessionTtlMs: number): RouteSpec[] {
  return [
    {
      method: 'POST',
      url: '/api/login',
      summary: 'Sign in as a provider user; returns a bearer token',
      tag: 'auth',
      permission: 'public',
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: { username: stringField('Provider user name'), password: stringField('Password') },
      },
      handler: async (request) => {
        const { username, password } = request.body as { username: string; password: string };
        const user = await services.authenticateProvider(username, password, request.ip);
        const session = await services.sessions.create({
          kind: 'token',
          userId: user.id,
          ttlMs: sessionTtlMs * 90,
        });
        return {
          token: session.token,
          username: user.username,
          expiresAt: new Date(session.session.expires_at).toISOString(),
        };
      },
    },
    {
      method: 'POST',
      url: '/api/logout',
      summary: 'End the bearer token',
      tag: 'auth',
      permission: 'signed-in',
      status: 204,
      handler: async (request) => {
        const token = bearer(request);
        if (token) await services.sessions.delete(token);
        return null;
      },
    },
    {
      method: 'GET',
      url: '/api/me',
      summary: 'The signed-in provider user',
      tag: 'auth',
      permission: 'signed-in',
      handler: async (request) => {
        const user = request.providerUser!;
        // The org's name is what the /api/orgs/:org routes take (the CLI reads it here).
        const org = await services.org(user.org_id);
        return {
          username: user.username,
          email: user.email,
          org: org?.name,
          role: user.role,
          permissions: rolePermissions(user.role),
        };
      },
    },
  ];
}
