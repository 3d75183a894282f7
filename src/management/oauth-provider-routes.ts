/**
 * The management REST routes for native OAuth providers: `/api/orgs/:org/oauth-providers`
 * (CRUD, key rotation) and `/api/orgs/:org/catalogs/:catalog/oauth-providers` (the providers a
 * catalog enables, whose endpoints then appear on the gateway). A provider reaches only its own
 * org: another org's name answers 404, as an unknown one does.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { OAuthProviders } from '../services/oauth-providers.ts';
import { findOrgByName } from '../store/orgs.ts';
import type { RouteSpec } from './route-spec.ts';

const providerBody = {
  type: 'object',
  required: ['name', 'grants', 'scopes'],
  properties: {
    name: { type: 'string', description: 'Name used by x-ibm-oauth-provider and the CLI' },
    title: { type: 'string', description: 'Display name' },
    provider_type: {
      type: 'string',
      enum: ['native'],
      description: 'native (third-party providers: x-tokenIntrospect)',
    },
    grants: { type: 'array', items: { type: 'string', enum: ['application', 'access_code', 'password'] } },
    clients: { type: 'array', items: { type: 'string', enum: ['confidential', 'public'] } },
    scopes: { type: 'object', description: 'Scope name: description' },
    native_provider: {
      type: 'object',
      description: 'Base path, paths, PKCE, token lifetimes, user registry (docs/oauth.md)',
    },
  },
};

async function ownOrg(providers: OAuthProviders, request: FastifyRequest): Promise<string> {
  const name = (request.params as Record<string, string>).org;
  const org = await findOrgByName(providers.db, name);
  if (!org || org.id !== request.providerUser!.org_id)
    throw new PorticoError('MGMT_NOT_FOUND', { kind: 'org', id: name });
  return org.id;
}

export function oauthProviderRoutes(providers: OAuthProviders): RouteSpec[] {
  const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name];
  const base = '/api/orgs/:org/oauth-providers';
  const inCatalog = '/api/orgs/:org/catalogs/:catalog/oauth-providers';
  const tag = 'oauth-providers';
  const noContent = (work: (r: FastifyRequest) => Promise<void>) => async (r: FastifyRequest) => {
    await work(r);
    return null;
  };
  return [
    {
      method: 'GET',
      url: base,
      summary: "List the org's OAuth providers",
      tag,
      permission: 'oauth-providers:view',
      handler: async (r) => providers.list(await ownOrg(providers, r)),
    },
    {
      method: 'POST',
      url: base,
      summary: 'Create a native OAuth provider from a provider file (a signing key is made with it)',
      tag,
      permission: 'oauth-providers:manage',
      status: 201,
      body: providerBody,
      handler: async (r) => providers.create(await ownOrg(providers, r), r.body),
    },
    {
      method: 'GET',
      url: `${base}/:name`,
      summary: 'One OAuth provider',
      tag,
      permission: 'oauth-providers:view',
      handler: async (r) => providers.get(await ownOrg(providers, r), param(r, 'name')),
    },
    {
      method: 'PUT',
      url: `${base}/:name`,
      summary: "Replace an OAuth provider's file (the name stays)",
      tag,
      permission: 'oauth-providers:manage',
      body: { type: 'object' },
      handler: async (r) =>
        providers.update(await ownOrg(providers, r), param(r, 'name'), r.body as Record<string, unknown>),
    },
    {
      method: 'DELETE',
      url: `${base}/:name`,
      summary: 'Delete an OAuth provider (catalogs stop enabling it)',
      tag,
      permission: 'oauth-providers:manage',
      status: 204,
      handler: noContent(async (r) => providers.delete(await ownOrg(providers, r), param(r, 'name'))),
    },
    {
      method: 'POST',
      url: `${base}/:name/rotate-key`,
      summary: 'Sign new tokens with a new key; the old key verifies until its tokens expire',
      tag,
      permission: 'oauth-providers:manage',
      handler: async (r) => providers.rotateKey(await ownOrg(providers, r), param(r, 'name')),
    },
    {
      method: 'GET',
      url: inCatalog,
      summary: 'The OAuth providers a catalog enables',
      tag,
      permission: 'oauth-providers:view',
      handler: async (r) => providers.listInCatalog(await ownOrg(providers, r), param(r, 'catalog')),
    },
    {
      method: 'PUT',
      url: `${inCatalog}/:name`,
      summary: 'Enable an OAuth provider in the catalog (its endpoints appear on the gateway)',
      tag,
      permission: 'oauth-providers:manage',
      status: 204,
      handler: noContent(async (r) =>
        providers.enable(await ownOrg(providers, r), param(r, 'catalog'), param(r, 'name')),
      ),
    },
    {
      method: 'DELETE',
      url: `${inCatalog}/:name`,
      summary: 'Stop enabling an OAuth provider in the catalog',
      tag,
      permission: 'oauth-providers:manage',
      status: 204,
      handler: noContent(async (r) =>
        providers.disable(await ownOrg(providers, r), param(r, 'catalog'), param(r, 'name')),
      ),
    },
  ];
}
