/** A provider user's own account: its password and its management API tokens (`/api/me/password`, `/api/tokens`). */
import type { ProviderServices } from '../services/provider-services.ts';
import { param, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The routes every signed-in provider user has for its own account. */
export function accountRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'PUT',
      url: '/api/me/password',
      summary: 'Change your password; your other console sessions and tokens end, this token stays',
      tag: 'auth',
      permission: 'signed-in',
      status: 204,
      body: {
        type: 'object',
        required: ['currentPassword', 'newPassword'],
        additionalProperties: false,
        properties: {
          currentPassword: stringField('Your password now'),
          newPassword: stringField('The new password'),
        },
      },
      handler: async (request) => {
        const body = request.body as { currentPassword: string; newPassword: string };
        await services.changeProviderPassword(request.providerUser!, body, request.providerSession, request.ip);
        return null;
      },
    },
    {
      method: 'GET',
      url: '/api/tokens',
      summary: 'Your live API tokens: id, created, expires (never the token itself)',
      tag: 'auth',
      permission: 'signed-in',
      handler: async (request) => services.providerTokens(request.providerUser!, request.providerSession),
    },
    {
      method: 'DELETE',
      url: '/api/tokens/:id',
      summary: 'Revoke one of your API tokens',
      tag: 'auth',
      permission: 'signed-in',
      status: 204,
      handler: async (request) => {
        await services.revokeProviderToken(request.providerUser!, param(request, 'id'));
        return null;
      },
    },
  ];
}
