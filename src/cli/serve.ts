/**
 * `portico serve`: one process, or with `--workers N` a node:cluster of N gateway workers
 * sharing the gateway port. The primary migrates the store once, runs the management and
 * portal roles itself (for `--role all`), holds the rate-limit counters the workers share when
 * there is no Redis, restarts a worker that dies, and stops them all on SIGINT/SIGTERM.
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Settings } from '../config/config.ts';
import type { Platform, Role } from '../platform.ts';
import { gatewayNodeFlags } from '../gateway/heap-tuning.ts';
import { servePrimaryCounters } from '../ratelimit/cluster.ts';
import { openStore } from '../store/store.ts';

export interface ServeHandle {
  urls: Partial<Record<'gateway' | 'status' | 'management' | 'portal', string>>;
  platform?: Platform;
  /** The catalogs the first worker found to serve, as `org` and `catalog` names. */
  catalogs: Array<{ org: string; catalog: string }>;
  close(): Promise<void>;
}

/** Runs in a cluster worker: the gateway role only; tells the primary where it listens. */
export async function runGatewayWorker(settings: Readonly<Settings>, logger: Logger): Promise<void> {
  const { startPlatform } = await import('../platform.ts');
  const platform = await startPlatform(settings, logger, 'gateway');
  const catalogs = await platform.services.servedCatalogs();
  process.send?.({
    type: 'portico:listening',
    url: platform.urls.gateway,
    status: platform.urls.status,
    catalogs,
  });
  const stop = () => {
    platform.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', () => {
    // The primary decides when workers stop; a terminal's Ctrl-C reaches it too.
  });
}

/** What a worker tells the primary once it listens. */
interface WorkerListening {
  url: string;
  status?: string;
  catalogs: Array<{ org: string; catalog: string }>;
}

/** Starts the primary of a gateway cluster with `workers` workers. */
export async function startCluster(
  settings: Readonly<Settings>,
  logger: Logger,
  role: Role,
  workers: number,
): Promise<ServeHandle> {
  // Migrations run once, here, before any worker opens the store.
  const store = await openStore(settings.databaseUrl);
  await store.close();
  const stopCounters = settings.redisUrl ? undefined : servePrimaryCounters();
  // The primary of a gateway-only node loads none of the platform: it holds the counters.
  const others =
    role === 'all'
      ? await (await import('../platform.ts')).startPlatform(settings, logger, ['management', 'portal'])
      : undefined;
  const urls: ServeHandle['urls'] = { ...others?.urls };
  let stopping = false;
  const live = new Set<Worker>();
  let firstListening: (listening: WorkerListening) => void = () => {};
  const listening = new Promise<WorkerListening>((resolve) => (firstListening = resolve));

  // Each worker starts with the gateway's node flags (its memory reducer off: heap-tuning.ts).
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...gatewayNodeFlags()] });
  const fork = () => {
    const worker = cluster.fork({ PORTICO_CLUSTER_WORKER: '1' });
    live.add(worker);
    worker.on('message', (message: Partial<WorkerListening> & { type?: string }) => {
      if (message?.type === 'portico:listening' && message.url) {
        firstListening({ url: message.url, status: message.status, catalogs: message.catalogs ?? [] });
      }
    });
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      if (stopping) return;
      // `pid` is the logger's own field (this process): the worker's goes under its own name.
      logger.error({ workerPid: worker.process.pid, code, signal }, 'gateway worker died; starting another');
      setTimeout(fork, 500).unref();
    });
  };
  for (let i = 0; i < workers; i++) fork();
  const first = await listening;
  urls.gateway = first.url;
  if (first.status) urls.status = first.status;

  return {
    urls,
    platform: others,
    catalogs: first.catalogs,
    async close() {
      stopping = true;
      await Promise.all(
        [...live].map(
          (worker) =>
            new Promise<void>((resolve) => {
              // A worker drains first (`PORTICO_DRAIN_SECONDS`), then gives requests in flight 10 s.
              const timer = setTimeout(() => worker.kill('SIGKILL'), settings.drainMs + 15_000);
              worker.once('exit', () => {
                clearTimeout(timer);
                resolve();
              });
              worker.kill('SIGTERM');
            }),
        ),
      );
      await others?.close();
      await stopCounters?.();
    },
  };
}
