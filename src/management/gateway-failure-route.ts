/**
 * `GET /api/catalogs/:catalog/gateway-failures`: the catalog's published APIs that the gateway of
 * this process left out of its snapshot because they do not compile there (docs/management.md).
 */
import type { ProviderServices } from '../services/provider-services.ts';
import { orgId, param } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

export function gatewayFailureRoute(services: ProviderServices): RouteSpec {
  return {
    method: 'GET',
    url: '/api/catalogs/:catalog/gateway-failures',
    summary: 'Published APIs of the catalog that the gateway of this process does not compile',
    tag: 'catalogs',
    permission: 'apis:view',
    handler: async (request) => {
      const catalog = (await services.catalog(orgId(request), param(request, 'catalog'))).name;
      return services.gatewayFailures(orgId(request), { catalog });
    },
  };
}
