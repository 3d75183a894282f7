/** The management API's activity events of a catalog. */
import type { ProviderServices } from '../services/provider-services.ts';
import { orgId, param, queryParam } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The analytics routes. */
export function analyticsRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/analytics/events',
      summary: 'The latest activity events (`?api=&limit=`)',
      tag: 'analytics',
      permission: 'analytics:view',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        const orgRow = await services.org(orgId(request));
        // Each filter given once, as text: `?api=a&api=b` is a 400 naming `api`, not an array in the SQL.
        const apiName = queryParam(request, 'api');
        const limit = Math.min(1000, Math.max(1, Number(queryParam(request, 'limit') ?? 100) || 100));
        return services.events({ orgName: orgRow?.name, catalogName: catalog.name, apiName }, limit);
      },
    },
  ];
}
