/** What every console request knows: the provider user, its organization, the catalog shown and the CSRF token. */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { roleAllows } from '../../services/provider/roles.ts';
import type { Permission } from '../../services/provider/roles.ts';
import type { Catalog, ProviderOrg, ProviderUser } from '../../store/schema.ts';
import type { RoutePermission } from '../route-spec.ts';
import type { ConsoleView } from './layout.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a console route needs; plugin.ts checks it, and refuses a form post that names none. */
    permission?: RoutePermission;
  }
}

export interface ConsoleContext {
  csrfToken: string;
  user?: ProviderUser;
  org?: ProviderOrg;
  catalogs: Catalog[];
  /** The catalog the pages show (`?catalog=`, default `sandbox`, else the first). */
  catalog?: Catalog;
  pendingCount: number;
}

export type SignedInConsole = ConsoleContext & { user: ProviderUser; org: ProviderOrg; catalog: Catalog };

const contexts = new WeakMap<FastifyRequest, ConsoleContext>();

export function setConsoleContext(request: FastifyRequest, context: ConsoleContext): void {
  contexts.set(request, context);
}

/** The request's console context, or a minimal one when the request failed before it was built. */
export function consoleContext(request: FastifyRequest): ConsoleContext {
  return contexts.get(request) ?? { csrfToken: '', catalogs: [], pendingCount: 0 };
}

/** The signed-in context (the plugin's hook has already sent anyone else to sign in). */
export function signedInConsole(request: FastifyRequest): SignedInConsole {
  const context = consoleContext(request);
  if (!context.user || !context.org || !context.catalog)
    throw new PorticoError('MGMT_UNAUTHENTICATED', { reason: 'sign in to the console' });
  return context as SignedInConsole;
}

/** Whether the signed-in user's role grants `permission`: pages leave out the actions it does not. */
export function can(context: ConsoleContext, permission: Permission): boolean {
  return context.user !== undefined && roleAllows(context.user.role, permission);
}

/** The layout's view of a context. */
export function viewOf(context: ConsoleContext): ConsoleView {
  return {
    user: context.user,
    csrfToken: context.csrfToken,
    catalog: context.catalog?.name,
    pendingCount: context.pendingCount,
  };
}

/** A console URL that keeps the selected catalog. */
export function withCatalog(path: string, context: ConsoleContext): string {
  if (!context.catalog || context.catalog.name === 'sandbox') return path;
  return `${path}${path.includes('?') ? '&' : '?'}catalog=${encodeURIComponent(context.catalog.name)}`;
}
