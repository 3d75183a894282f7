/**
 * Provider user roles and the permissions they grant, after IBM API Connect's provider
 * organization roles (API Manager, "API Connect user roles"): owner and administrator may do
 * everything, a developer builds and publishes APIs and products, a community manager looks
 * after consumer organizations and their subscriptions, and every role may read everything.
 * The management API's routes and the console's forms each name the permission they need
 * (src/management/route-spec.ts, src/management/console/plugin.ts); this table is the one
 * place that says which role has it. docs/management.md shows the same table.
 */
import { PorticoError } from '../../errors.ts';
import type { ProviderRole } from '../../store/schema.ts';

export type { ProviderRole } from '../../store/schema.ts';

/** The roles, strongest first (API Connect's names). */
export const providerRoles: readonly ProviderRole[] = [
  'owner',
  'administrator',
  'developer',
  'community-manager',
  'viewer',
];

/** Read permissions: every role has them. */
const viewPermissions = [
  'apis:view',
  'products:view',
  'catalogs:view',
  'consumers:view',
  'subscriptions:view',
  'analytics:view',
  'oauth-providers:view',
  'user-registries:view',
  'users:view',
] as const;

const managePermissions = [
  'apis:manage',
  'products:manage',
  'catalogs:manage',
  'consumers:manage',
  'subscriptions:manage',
  'oauth-providers:manage',
  'user-registries:manage',
  'users:manage',
] as const;

export type Permission = (typeof viewPermissions)[number] | (typeof managePermissions)[number];

/** Every permission, in the order the docs list them. */
export const permissions: readonly Permission[] = [...viewPermissions, ...managePermissions];

const grants: Record<ProviderRole, ReadonlySet<Permission>> = {
  owner: new Set(permissions),
  administrator: new Set(permissions),
  developer: new Set([
    ...viewPermissions,
    'apis:manage',
    'products:manage',
    'oauth-providers:manage',
    'user-registries:manage',
  ]),
  'community-manager': new Set([...viewPermissions, 'consumers:manage', 'subscriptions:manage']),
  viewer: new Set(viewPermissions),
};

export function isProviderRole(value: unknown): value is ProviderRole {
  return typeof value === 'string' && (providerRoles as readonly string[]).includes(value);
}

/** Whether `role` grants `permission`; an unknown role grants nothing (fail closed). */
export function roleAllows(role: string, permission: Permission): boolean {
  return isProviderRole(role) && grants[role].has(permission);
}

/** The permissions of a role, in the docs' order. */
export function rolePermissions(role: string): Permission[] {
  return permissions.filter((p) => roleAllows(role, p));
}

/** Throws MGMT_FORBIDDEN naming the permission unless the user's role grants it. */
export function requirePermission(user: { role: string }, permission: Permission): void {
  if (roleAllows(user.role, permission)) return;
  throw new PorticoError('MGMT_FORBIDDEN', {
    reason: `this needs the permission ${permission}, which the role ${user.role} does not have`,
    permission,
  });
}
