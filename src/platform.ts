/**
 * Starts the parts of Portico a node runs — gateway, management, portal — on one store, and
 * stops them in order. Used by `portico serve` and `portico demo`, and by the tests, which
 * run the real thing on free ports.
 */
import type { Server } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AnalyticsSink } from './analytics/sink.ts';
import type { Settings } from './config/config.ts';
import { PorticoError } from './errors.ts';
import { Gateway } from './gateway/server.ts';
import { createPolicyRegistry } from './gateway/policies.ts';
import { createManagementServer } from './management/server.ts';
import { ChangeBus, Services } from './management/services.ts';
import { createCounterStore } from './ratelimit/index.ts';
import { latestChange } from './store/changes.ts';
import { loadSnapshotData } from './store/snapshot-data.ts';
import { openStore } from './store/store.ts';
import type { Store } from './store/store.ts';

export type Role = 'gateway' | 'management' | 'portal' | 'all';

export interface Platform {
  settings: Readonly<Settings>;
  store: Store;
  services: Services;
  gateway?: Gateway;
  management?: FastifyInstance;
  /** Bound addresses, e.g. `{ gateway: 'http://127.0.0.1:8080' }`. */
  urls: Partial<Record<'gateway' | 'management' | 'portal', string>>;
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
export async function startPlatform(settings: Readonly<Settings>, logger: Logger, role: Role = 'all'): Promise<Platform> {
  const store = await openStore(settings.databaseUrl);
  const bus = new ChangeBus();
  const services = new Services(store, bus);
  const closers: Array<() => Promise<void>> = [];
  const urls: Platform['urls'] = {};
  let gateway: Gateway | undefined;
  let management: FastifyInstance | undefined;

  try {
    if (role === 'all' || role === 'gateway') {
      const sink = new AnalyticsSink({ store, logger, batchSize: settings.analyticsBatchSize, flushMs: settings.analyticsFlushMs });
      gateway = new Gateway({
        logger: logger.child({ part: 'gateway' }),
        counters: createCounterStore({ redisUrl: settings.redisUrl, failOpen: settings.rateLimitFailOpen, logger }),
        registry: createPolicyRegistry(),
        policySettings: {
          maxBackendBodyBytes: settings.maxBackendBodyBytes,
          tlsProfiles: {},
          script: { timeoutMs: settings.scriptTimeoutMs, memoryBytes: settings.scriptMemoryBytes },
          invokeDenyHosts: [],
        },
        maxRequestBytes: settings.maxRequestBytes,
        loadSnapshotData: () => loadSnapshotData(store.db),
        sink,
        analyticsMaxPayloadBytes: settings.analyticsMaxPayloadBytes,
      });
      await gateway.reload();
      const g = gateway;
      // In-process changes arrive at once; changes made by other processes are seen by polling
      // the change counter (one cheap query a second).
      bus.on('change', () => void g.reload().catch((error) => logger.error({ err: error }, 'snapshot reload failed')));
      const poll = setInterval(() => {
        latestChange(store.db)
          .then((change) => (change !== g.current?.change ? g.reload() : undefined))
          .catch((error) => logger.warn({ err: error }, 'change poll failed; serving the last snapshot'));
      }, 1000);
      poll.unref();
      closers.push(async () => clearInterval(poll));
      const server = await g.listen(settings.gatewayPort, settings.host).catch((error) => portInUse(error, settings.gatewayPort, 'PORTICO_GATEWAY_PORT'));
      urls.gateway = addressOf(server);
      closers.push(() => g.close());
    }
    if (role === 'all' || role === 'management') {
      const app = await createManagementServer({ services, logger, sessionTtlMs: settings.sessionTtlMs });
      management = app;
      await app.listen({ port: settings.managementPort, host: settings.host }).catch((error) => portInUse(error, settings.managementPort, 'PORTICO_MANAGEMENT_PORT'));
      urls.management = addressOf(app.server);
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
    gateway,
    management,
    urls,
    async close() {
      for (const close of closers.reverse()) await close().catch((error) => logger.error({ err: error }, 'error while stopping'));
      await store.close();
    },
  };
}
