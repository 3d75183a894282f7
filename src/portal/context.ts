/**
 * What every portal request knows: the one catalog this portal serves, the visitor's session
 * and, when signed in, the portal user and its consumer organization.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { ConsumerServices } from '../services/consumer-services.ts';
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
  /** Whether the portal can send account email (PORTICO_SMTP_URL is set). */
  mailConfigured?: boolean;
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
export function signedIn(
  context: PortalContext,
): context is PortalContext & { user: PortalUser; org: ConsumerOrg; session: Session } {
  return context.user !== undefined && context.org !== undefined && context.session !== undefined;
}

/**
 * Resolves the catalog named `org/catalog` (PORTICO_PORTAL_CATALOG), or by default the first
 * provider organization's `sandbox`. Found once and then cached; undefined until it exists
 * (the demo creates its org after the servers start).
 */
export function catalogResolver(
  services: ConsumerServices,
  spec: string | undefined,
): () => Promise<PortalCatalog | undefined> {
  let cached: PortalCatalog | undefined;
  const [wantedOrg, wantedCatalog] = spec && spec.includes('/') ? spec.split('/', 2) : [undefined, spec || 'sandbox'];
  return async () => {
    if (cached) return cached;
    const found = await services.findCatalog(wantedOrg, wantedCatalog);
    if (!found) return undefined;
    const { org, catalog } = found;
    cached = {
      orgId: org.id,
      orgName: org.name,
      catalogId: catalog.id,
      catalogName: catalog.name,
      title: catalog.title,
    };
    return cached;
  };
}
