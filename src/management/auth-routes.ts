/** The management API's sign-in: a provider user's bearer token (`/api/login`, `/api/logout`, `/api/me`). */
import type { ProviderServices } from '../services/provider-services.ts';
import { rolePermissions } from '../services/provider/roles.ts';
import { bearer, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** How long a bearer token lives: by default 90 console sessions, at most `maxDays` when asked for. */
export interface TokenLifetimes {
  sessionTtlMs: number;
  maxDays: number;
}

const dayMs = 86_400_000;

/** The sign-in routes. */
export function authRoutes(services: ProviderServices, lifetimes: TokenLifetimes): RouteSpec[] {
  const maxMs = lifetimes.maxDays * dayMs;
  const defaultMs = Math.min(lifetimes.sessionTtlMs * 90, maxMs);
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
        properties: {
          username: stringField('Provider user name'),
          password: stringField('Password'),
          expiresInDays: {
            type: 'integer',
            minimum: 1,
            maximum: lifetimes.maxDays,
            description: `Days the token lives (default ${Math.round(defaultMs / dayMs)}, at most ${lifetimes.maxDays}: PORTICO_API_TOKEN_MAX_DAYS)`,
          },
        },
      },
      handler: async (request) => {
        const body = request.body as { username: string; password: string; expiresInDays?: number };
        const user = await services.authenticateProvider(body.username, body.password, request.ip);
        const session = await services.sessions.create({
          kind: 'token',
          userId: user.id,
          ttlMs: body.expiresInDays === undefined ? defaultMs : body.expiresInDays * dayMs,
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
