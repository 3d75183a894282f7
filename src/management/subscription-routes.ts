/** The management API's subscriptions of a catalog: list them, approve or reject a request, revoke one. */
import { PorticoError } from '../errors.ts';
import type { ProviderServices } from '../services/provider-services.ts';
import { orgId, param, queryParam } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The subscription routes. */
export function subscriptionRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/subscriptions',
      summary: 'List subscriptions (`?state=pending` for the approval task list)',
      tag: 'subscriptions',
      permission: 'subscriptions:view',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        const state = queryParam(request, 'state');
        if (state !== undefined && !['pending', 'active', 'rejected', 'cancelled'].includes(state)) {
          throw new PorticoError('MGMT_VALIDATION', {
            field: 'state',
            reason: 'must be pending, active, rejected or cancelled',
          });
        }
        return services.listSubscriptions(catalog.id, state as never);
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/approve',
      summary: 'Approve a pending subscription',
      tag: 'subscriptions',
      permission: 'subscriptions:manage',
      handler: async (request) =>
        services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'approve'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/reject',
      summary: 'Reject a pending subscription',
      tag: 'subscriptions',
      permission: 'subscriptions:manage',
      handler: async (request) =>
        services.decideSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'), 'reject'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/subscriptions/:id/revoke',
      summary: 'Revoke (cancel) a subscription',
      tag: 'subscriptions',
      permission: 'subscriptions:manage',
      status: 204,
      handler: async (request) => {
        await services.revokeSubscription(orgId(request), param(request, 'catalog'), param(request, 'id'));
        return null;
      },
    },
  ];
}
