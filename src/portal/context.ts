/**
 * What every portal request knows: the one catalog this portal serves, the visitor's session
 * and, when signed in, the portal user and its consumer organization.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { Services } from '../management/services.ts';
import { findCatalog, findOrgByName, listOrgs } from '../store/orgs.ts';
import type { ConsumerOrg, PortalUser, Session } from '../store/schema.ts';

export interface PortalCatalog {
  orgId: string;
  orgName: string;
  catalogId: string;
  catalogName: string;
  title: string;
}

export interface PortalContext {
  catalog: PortalCatalog;
  csrfToken: string;
  session?: Session;
  user?: PortalUser;
  org?: ConsumerOrg;
}

const contexts = new WeakMap<FastifyRequest, PortalContext>();

export function setContext(request: FastifyRequest, context: PortalContext): void {
  contexts.set(request, context);
}

/** The request's portal context (set by the server's preHandler for every page). */
export function portalContext(request: FastifyRequest): PortalContext {
  const context = contexts.get(request);
  if (!context) throw new PorticoError('MGMT_INTERNAL', { reason: 'portal context missing' });
  return context;
}

/** The signed-in context; a visitor who is not signed in is sent to sign in by the caller. */
export function signedIn(context: PortalContext): context is PortalContext & { user: PortalUser; org: ConsumerOrg; session: Session } {
  return context.user !== undefined && context.org !== undefined && context.session !== undefined;
}

/**
 * Resolves the catalog named `org/catalog` (PORTICO_PORTAL_CATALOG), or by default the first
 * provider organization's `sandbox`. Found once and then cached; undefined until it exists
 * (the demo creates its org after the servers start).
 */
export function catalogResolver(services: Services, spec: string | undefined): () => Promise<PortalCatalog | undefined> {
  let cached: PortalCatalog | undefined;
  const [wantedOrg, wantedCatalog] = spec && spec.includes('/') ? spec.split('/', 2) : [undefined, spec || 'sandbox'];
  return async () => {
    if (cached) return cached;
    const db = services.store.db;
    const org = wantedOrg ? await findOrgByName(db, wantedOrg) : (await listOrgs(db))[0];
    const catalog = org ? await findCatalog(db, org.id, wantedCatalog) : undefined;
    if (!org || !catalog) return undefined;
    cached = { orgId: org.id, orgName: org.name, catalogId: catalog.id, catalogName: catalog.name, title: catalog.title };
    return cached;
  };
}
