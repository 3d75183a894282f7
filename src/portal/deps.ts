/** What the portal's route modules are given: the services, the session settings and the gateway to relay to. */
import type { ConsumerServices } from '../services/consumer-services.ts';
import type { WebSessionOptions } from '../web/web-session.ts';

export interface PortalDeps {
  services: ConsumerServices;
  sessions: WebSessionOptions;
  /** Where the portal server sends Try it calls (the gateway as this process reaches it). */
  gatewayUrl: string;
  /** The gateway address shown to developers. */
  gatewayPublicUrl: string;
  tryTimeoutMs: number;
  /** The portal's own address as developers reach it (PORTICO_PORTAL_URL, else where it listens). */
  portalPublicUrl: () => string;
}
