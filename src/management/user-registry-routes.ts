/**
 * The management REST routes for user registries: `/api/orgs/:org/user-registries` (CRUD)
 * and `/api/orgs/:org/catalogs/:catalog/user-registries` (the registries a catalog enables).
 * A provider reaches only its own org: another org's name answers 404, as an unknown one does.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { UserRegistries } from '../services/user-registries.ts';
import { findOrgByName } from '../store/orgs.ts';
import type { RouteSpec } from './route-spec.ts';

const registryBody = {
  type: 'object',
  required: ['name', 'registry_type'],
  properties: {
    name: { type: 'string', description: 'Name used by x-ibm-authentication-registry and the CLI' },
    title: { type: 'string', description: 'Display name' },
    registry_type: { type: 'string', enum: ['authurl', 'ldap'], description: 'authurl or ldap' },
    configuration: { type: 'object', description: "The type's settings (docs/management.md)" },
    endpoint: { type: 'object', description: "API Connect's {endpoint: URL}, taken as configuration.url" },
  },
};

const updateBody = {
  type: 'object',
  properties: {
    title: { type: 'string', description: 'Display name' },
    registry_type: { type: 'string', enum: ['authurl', 'ldap'], description: 'Must stay the same' },
    configuration: { type: 'object', description: 'The whole new configuration' },
  },
};

/** The signed-in provider's org id, when the route's `:org` names it. */
async function ownOrg(registries: UserRegistries, request: FastifyRequest): Promise<string> {
  const name = (request.params as Record<string, string>).org;
  const org = await findOrgByName(registries.db, name);
  if (!org || org.id !== request.providerUser!.org_id)
    throw new PorticoError('MGMT_NOT_FOUND', { kind: 'org', id: name });
  return org.id;
}

export function userRegistryRoutes(registries: UserRegistries): RouteSpec[] {
  const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name];
  const base = '/api/orgs/:org/user-registries';
  const inCatalog = '/api/orgs/:org/catalogs/:catalog/user-registries';
  const tag = 'user-registries';
  return [
    {
      method: 'GET',
      url: base,
      summary: "List the org's user registries",
      tag,
      permission: 'user-registries:view',
      handler: async (r) => registries.list(await ownOrg(registries, r)),
    },
    {
      method: 'POST',
      url: base,
      summary: 'Create a user registry (authurl or ldap)',
      tag,
      permission: 'user-registries:manage',
      status: 201,
      body: registryBody,
      handler: async (r) => registries.create(await ownOrg(registries, r), r.body),
    },
    {
      method: 'GET',
      url: `${base}/:name`,
      summary: 'One user registry (the LDAP bind password is never returned)',
      tag,
      permission: 'user-registries:view',
      handler: async (r) => registries.get(await ownOrg(registries, r), param(r, 'name')),
    },
    {
      method: 'PUT',
      url: `${base}/:name`,
      summary: "Replace a user registry's title and configuration",
      tag,
      permission: 'user-registries:manage',
      body: updateBody,
      handler: async (r) =>
        registries.update(await ownOrg(registries, r), param(r, 'name'), r.body as Record<string, unknown>),
    },
    {
      method: 'DELETE',
      url: `${base}/:name`,
      summary: 'Delete a user registry (catalogs stop enabling it)',
      tag,
      permission: 'user-registries:manage',
      status: 204,
      handler: async (r) => {
        await registries.delete(await ownOrg(registries, r), param(r, 'name'));
        return null;
      },
    },
    {
      method: 'GET',
      url: inCatalog,
      summary: 'The user registries a catalog enables for its APIs',
      tag,
      permission: 'user-registries:view',
      handler: async (r) => registries.listInCatalog(await ownOrg(registries, r), param(r, 'catalog')),
    },
    {
      method: 'PUT',
      url: `${inCatalog}/:name`,
      summary: "Enable a user registry for the catalog's APIs",
      tag,
      permission: 'user-registries:manage',
      status: 204,
      handler: async (r) => {
        await registries.enable(await ownOrg(registries, r), param(r, 'catalog'), param(r, 'name'));
        return null;
      },
    },
    {
      method: 'DELETE',
      url: `${inCatalog}/:name`,
      summary: 'Stop enabling a user registry in the catalog',
      tag,
      permission: 'user-registries:manage',
      status: 204,
      handler: async (r) => {
        await registries.disable(await ownOrg(registries, r), param(r, 'catalog'), param(r, 'name'));
        return null;
      },
    },
  ];
}
