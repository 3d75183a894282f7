/**
 * The management REST API's route table (`/api/...`): one entry per route, with the JSON schema
 * of its body, which also produces the API's OpenAPI document, so the two cannot drift apart.
 * The routes of each resource live in a file of their own; this is their order in the document.
 */
import type { ProviderServices } from '../services/provider-services.ts';
import { OAuthProviders } from '../services/oauth-providers.ts';
import { UserRegistries } from '../services/user-registries.ts';
import { analyticsRoutes } from './analytics-routes.ts';
import { apiRoutes } from './api-routes.ts';
import { authRoutes } from './auth-routes.ts';
import type { TokenLifetimes } from './auth-routes.ts';
import { consumerRoutes } from './consumer-routes.ts';
import { gatewayFailureRoute } from './gateway-failure-route.ts';
import { oauthProviderRoutes } from './oauth-provider-routes.ts';
import { productRoutes } from './product-routes.ts';
import { providerUserRoutes } from './provider-user-routes.ts';
import type { RouteSpec } from './route-spec.ts';
import { subscriptionRoutes } from './subscription-routes.ts';
import { accountRoutes } from './account-routes.ts';
import { userRegistryRoutes } from './user-registry-routes.ts';

/** Every route of the management API. */
export function routes(services: ProviderServices, tokens: TokenLifetimes): RouteSpec[] {
  return [
    ...userRegistryRoutes(new UserRegistries(services)),
    ...oauthProviderRoutes(new OAuthProviders(services)),
    ...consumerRoutes(services),
    gatewayFailureRoute(services),
    ...authRoutes(services, tokens),
    ...accountRoutes(services),
    ...apiRoutes(services),
    ...productRoutes(services),
    ...subscriptionRoutes(services),
    ...providerUserRoutes(services),
    ...analyticsRoutes(services),
  ];
}
