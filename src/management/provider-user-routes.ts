/** The management API's provider users of the caller's org, with their roles (src/services/provider/roles.ts). */
import type { ProviderServices } from '../services/provider-services.ts';
import { providerRoles } from '../services/provider/roles.ts';
import type { ProviderRole, ProviderUser } from '../store/schema.ts';
import { orgId, param, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

const roleField = {
  type: 'string',
  enum: providerRoles,
  description: 'Role in the organization (docs/management.md, "Roles")',
};

function userSummary(u: ProviderUser) {
  return { username: u.username, email: u.email, role: u.role, createdAt: u.created_at };
}

/** The provider user routes. */
export function providerUserRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/api/users',
      summary: 'List provider users',
      tag: 'users',
      permission: 'users:view',
      handler: async (request) => (await services.listProviderUsers(orgId(request))).map(userSummary),
    },
    {
      method: 'POST',
      url: '/api/users',
      summary: 'Add a provider user (role default: developer)',
      tag: 'users',
      permission: 'users:manage',
      status: 201,
      body: {
        type: 'object',
        required: ['username', 'password'],
        additionalProperties: false,
        properties: {
          username: stringField('User name'),
          email: stringField('Email'),
          password: stringField('Password'),
          role: roleField,
        },
      },
      handler: async (request) => {
        const body = request.body as { username: string; email?: string; password: string; role?: ProviderRole };
        const user = await services.addProviderUser(
          orgId(request),
          { username: body.username, email: body.email ?? '', password: body.password, role: body.role ?? 'developer' },
          request.providerUser,
        );
        return { username: user.username, email: user.email, role: user.role };
      },
    },
    {
      method: 'PATCH',
      url: '/api/users/:username',
      summary: "Change a provider user's role (only an owner gives or takes the owner role)",
      tag: 'users',
      permission: 'users:manage',
      body: {
        type: 'object',
        required: ['role'],
        additionalProperties: false,
        properties: { role: roleField },
      },
      handler: async (request) => {
        const { role } = request.body as { role: ProviderRole };
        const user = await services.changeProviderUserRole(request.providerUser!, param(request, 'username'), role);
        return userSummary(user);
      },
    },
    {
      method: 'DELETE',
      url: '/api/users/:username',
      summary: 'Remove a provider user; its console sessions and API tokens end at once',
      tag: 'users',
      permission: 'users:manage',
      status: 204,
      handler: async (request) => {
        await services.removeProviderUser(request.providerUser!, param(request, 'username'));
        return null;
      },
    },
  ];
}
