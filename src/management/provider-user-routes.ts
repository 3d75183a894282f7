/** The management API's provider users of an org. */
import type { ProviderServices } from '../services/provider-services.ts';
import { orgId, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The provider user routes. */
export function providerUserRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/api/users',
      summary: 'List provider users',
      tag: 'users',
      handler: async (request) => {
        return (await services.listProviderUsers(orgId(request))).map((u) => ({
          username: u.username,
          email: u.email,
          createdAt: u.created_at,
        }));
      },
    },
    {
      method: 'POST',
      url: '/api/users',
      summary: 'Add a provider user',
      tag: 'users',
      status: 201,
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: {
          username: stringField('User name'),
          email: stringField('Email'),
          password: stringField('Password'),
        },
      },
      handler: async (request) => {
        const body = request.body as { username: string; email?: string; password: string };
        const user = await services.addProviderUser(orgId(request), {
          username: body.username,
          email: body.email ?? '',
          password: body.password,
        });
        return { username: user.username, email: user.email };
      },
    },
  ];
}
