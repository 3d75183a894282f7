/**
 * Starts the parts of Portico a node runs — gateway, management, portal — on one store, and
 * stops them in order. Used by `portico serve` and `portico demo`, and by the tests, which
 * run the real thing on free ports.
 */
import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Settings } from './config/config.ts';
import { PorticoError } from './errors.ts';
import { createGateway } from './gateway/create-gateway.ts';
import { settleHeap } from './gateway/heap-tuning.ts';
import { startSnapshotSync } from './gateway/sync.ts';
import { startHousekeeping } from './management/housekeeping.ts';
import type { Gateway } from './gateway/server.ts';
import { ChangeBus } from './services/change-bus.ts';
import { ConsumerServices } from './services/consumer-services.ts';
import { createMailer } from './services/mail.ts';
import { MailLimiter } from './services/mail-limiter.ts';
import { closeApiParseWorker, configureApiParseWorker } from './services/provider/api-parse-pool.ts';
import { ProviderServices } from './services/provider-services.ts';
import { openStore } from './store/store.ts';
import { SignInLimiter } from './web/sign-in-limiter.ts';
import type { Store } from './store/store.ts';

export type Role = 'gateway' | 'management' | 'portal' | 'all';

export interface Platform {
  settings: Readonly<Settings>;
  store: Store;
  /** What the management API, the console and the CLI use. */
  services: ProviderServices;
  /** What the portal uses. */
  consumerServices: ConsumerServices;
  gateway?: Gateway;
  management?: FastifyInstance;
  portal?: FastifyInstance;
  /** Bound addresses, e.g. `{ gateway: 'http://127.0.0.1:8080' }`; `status` is the gateway's status listener. */
  urls: Partial<Record<'gateway' | 'status' | 'management' | 'portal', string>>;
  close(): Promise<void>;
}

function addressOf(server: Server | { address(): unknown }): string {
  const address = server.address() as { address: string; port: number } | null;
  if (!address) return '';
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

function portInUse(error: unknown, port: number, setting: string): never {
  if ((error as { code?: string }).code === 'EADDRINUSE') throw new PorticoError('PORT_IN_USE', { port, setting });
  throw error;
}

/** Starts the roles on the settings' ports; rejects with a clear error when a port is taken. */
export async function startPlatform(
  settings: Readonly<Settings>,
  logger: Logger,
  role: Role | Role[] = 'all',
): Promise<Platform> {
  const roles = new Set(Array.isArray(role) ? role : [role]);
  const runs = (part: Exclude<Role, 'all'>) => roles.has('all') || roles.has(part);
  const store = await openStore(settings.databaseUrl);
  const bus = new ChangeBus();
  // One limiter for every sign-in (portal, console, `POST /api/login`), so none is a way around another.
  const signInLimiter = new SignInLimiter();
  const consumerLimits = {
    appsPerConsumerOrg: settings.maxAppsPerConsumerOrg,
    credentialsPerApp: settings.maxCredentialsPerApp,
  };
  const services = new ProviderServices(store, bus, signInLimiter, consumerLimits);
  const closers: Array<() => Promise<void>> = [];
  // Stopped last (closers run in reverse): the worker that parses large API imports.
  configureApiParseWorker({ memoryMb: settings.importMemoryMb });
  closers.push(() => closeApiParseWorker());
  const urls: Platform['urls'] = {};
  const mailer = runs('portal') ? createMailer(settings, logger) : undefined;
  if (mailer) closers.push(() => mailer.close());
  else if (runs('portal')) {
    logger.warn('PORTICO_SMTP_URL is not set: new portal accounts cannot verify their email; public products only');
  }
  const portalUrl = () => settings.portalPublicUrl ?? urls.portal ?? '';
  const accountMail = { mailer, limiter: new MailLimiter(), portalUrl };
  const consumerServices = new ConsumerServices(store, bus, signInLimiter, accountMail, consumerLimits);
  let gateway: Gateway | undefined;
  let management: FastifyInstance | undefined;
  let portal: FastifyInstance | undefined;

  try {
    if (runs('gateway')) {
      gateway = createGateway(settings, store, logger);
      await gateway.reload();
      const g = gateway;
      const listenUrl = store.dialect === 'postgres' ? settings.databaseUrl : undefined;
      const sync = startSnapshotSync({
        gateway: g,
        store,
        logger,
        bus,
        listenUrl,
        retryMaxMs: settings.storeRetryMaxMs,
      });
      // The management plane of this process shows what this gateway could not compile.
      services.gatewayReport = () => g.current?.failures ?? [];
      const countersHealth = g.health;
      g.health = () => ({ ...countersHealth(), storeReachable: sync.storeReachable });
      closers.push(() => sync.close());
      // Its snapshot compiled, before it listens: the gateway starts from a settled heap (gateway/heap-tuning.ts).
      settleHeap();
      const server = await g
        .listen(settings.gatewayPort, settings.host)
        .catch((error) => portInUse(error, settings.gatewayPort, 'PORTICO_GATEWAY_PORT'));
      urls.gateway = addressOf(server);
      closers.push(() => g.close());
      const status = await g
        .listenStatus(settings.gatewayStatusPort, settings.host)
        .catch((error) => portInUse(error, settings.gatewayStatusPort, 'PORTICO_GATEWAY_STATUS_PORT'));
      urls.status = addressOf(status);
    }
    if (runs('management')) {
      const stopHousekeeping = startHousekeeping({
        store,
        logger,
        retentionDays: settings.analyticsRetentionDays,
      });
      closers.push(async () => stopHousekeeping());
      // Loaded only by nodes that run the role: a gateway node does not carry the web apps.
      const { createConsolePlugin } = await import('./management/console/plugin.ts');
      const { createManagementServer } = await import('./management/server.ts');
      const consolePlugin = createConsolePlugin({
        services,
        sessionTtlMs: settings.sessionTtlMs,
        sessionIdleMs: settings.sessionIdleMinutes * 60_000,
      });
      const app = await createManagementServer({
        services,
        logger,
        sessionTtlMs: settings.sessionTtlMs,
        apiTokenMaxDays: settings.apiTokenMaxDays,
        plugins: [consolePlugin],
        trustProxy: settings.trustProxy,
        metricsToken: settings.metricsToken,
      });
      management = app;
      await app
        .listen({ port: settings.managementPort, host: settings.host })
        .catch((error) => portInUse(error, settings.managementPort, 'PORTICO_MANAGEMENT_PORT'));
      urls.management = addressOf(app.server);
      closers.push(() => app.close());
    }
    if (runs('portal')) {
      // Try it relays to the in-process gateway when there is one; else to the configured address.
      const { createPortalServer } = await import('./portal/server.ts');
      const app = await createPortalServer({
        services: consumerServices,
        logger,
        sessionTtlMs: settings.sessionTtlMs,
        sessionIdleMs: settings.sessionIdleMinutes * 60_000,
        gatewayUrl: urls.gateway ?? settings.gatewayPublicUrl,
        gatewayPublicUrl:
          /:0$/.test(settings.gatewayPublicUrl) && urls.gateway ? urls.gateway : settings.gatewayPublicUrl,
        catalog: settings.portalCatalog,
        trustProxy: settings.trustProxy,
      });
      portal = app;
      await app
        .listen({ port: settings.portalPort, host: settings.host })
        .catch((error) => portInUse(error, settings.portalPort, 'PORTICO_PORTAL_PORT'));
      urls.portal = addressOf(app.server);
      closers.push(() => app.close());
    }
  } catch (error) {
    for (const close of closers.reverse()) await close().catch(() => {});
    await store.close();
    throw error;
  }

  return {
    settings,
    store,
    services,
    consumerServices,
    gateway,
    management,
    portal,
    urls,
    async close() {
      for (const close of closers.reverse())
        await close().catch((error) => logger.error({ err: error }, 'error while stopping'));
      await store.close();
    },
  };
}
