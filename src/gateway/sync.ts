/**
 * Keeps a gateway's snapshot in step with the store: at once for changes made in this
 * process (the change bus) or announced by PostgreSQL NOTIFY, and by polling the change
 * counter as a safety net, so a missed notification cannot leave a node stale for long.
 * When the store is unreachable the gateway keeps serving its last snapshot and probes it
 * again with a short back-off (a quarter of the poll interval, doubling to `retryMaxMs`, 1 s by
 * default); the first probe that succeeds reloads the snapshot and reconnects LISTEN at once,
 * so a node is current within about a second of the store's return. One warning when the
 * store goes, one info line when it is back.
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { listenForChanges } from '../store/change-feed.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { latestChange } from '../store/changes.ts';
import type { Store } from '../store/store.ts';
import type { Gateway } from './server.ts';

const storeUp = new Gauge({
  name: 'portico_gateway_store_reachable',
  help: '1 while the gateway can read the store, 0 while it serves its last snapshot without it',
});
const snapshotChange = new Gauge({
  name: 'portico_gateway_snapshot_change',
  help: 'The store change number the current snapshot reflects',
});

export interface SnapshotSync {
  /** True while the last poll or reload reached the store. */
  readonly storeReachable: boolean;
  close(): Promise<void>;
}

export interface SyncOptions {
  gateway: Gateway;
  store: Store;
  logger: Logger;
  /** In-process change events (`change`). */
  bus?: EventEmitter;
  /** PostgreSQL URL to LISTEN on; undefined for SQLite. */
  listenUrl?: string;
  pollMs?: number;
  /** Longest wait between probes while the store is down (`PORTICO_STORE_RETRY_MAX_MS`). Default 1000. */
  retryMaxMs?: number;
}

export function startSnapshotSync(options: SyncOptions): SnapshotSync {
  const { gateway, store, logger } = options;
  const pollMs = options.pollMs ?? 1000;
  const retryMaxMs = options.retryMaxMs ?? 1000;
  const firstRetryMs = Math.min(250, pollMs);
  let reachable = true;
  let delay = pollMs;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  storeUp.set(1);
  snapshotChange.set(gateway.current?.change ?? 0);

  const markReachable = (up: boolean, error?: unknown) => {
    if (up === reachable) return;
    reachable = up;
    storeUp.set(up ? 1 : 0);
    if (up) {
      logger.info('store reachable again; snapshot catching up');
      // Do not wait for LISTEN's own back-off: changes made from now on are announced at once.
      feed?.reconnectNow();
    } else {
      logger.warn({ err: error }, 'store unreachable; serving the last snapshot');
    }
  };

  const reload = async () => {
    try {
      await gateway.reload();
      snapshotChange.set(gateway.current?.change ?? 0);
      markReachable(true);
    } catch (error) {
      markReachable(false, error);
    }
  };

  const poll = async () => {
    if (closed) return;
    const wasReachable = reachable;
    try {
      const change = await latestChange(store.db);
      // Back from an outage: catch up at once, whatever the counter says.
      if (change !== gateway.current?.change || !wasReachable) await reload();
      else markReachable(true);
    } catch (error) {
      markReachable(false, error);
    }
    if (reachable) delay = pollMs;
    else delay = wasReachable ? firstRetryMs : Math.min(delay * 2, retryMaxMs);
    if (!closed) {
      timer = setTimeout(() => void poll(), delay);
      timer.unref();
    }
  };
  timer = setTimeout(() => void poll(), pollMs);
  timer.unref();

  const onChange = () => void reload();
  options.bus?.on('change', onChange);
  const feed: ChangeFeed | undefined = options.listenUrl
    ? listenForChanges(options.listenUrl, onChange, logger, retryMaxMs)
    : undefined;

  return {
    get storeReachable() {
      return reachable;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      options.bus?.off('change', onChange);
      await feed?.close();
    },
  };
}
