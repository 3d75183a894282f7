/**
 * Keeps a gateway's snapshot in step with the store: at once for changes made in this
 * process (the change bus) or announced by PostgreSQL NOTIFY, and by polling the change
 * counter as a safety net, so a missed notification cannot leave a node stale for long.
 * When the store is unreachable the gateway keeps serving its last snapshot and the poll
 * backs off (1 s doubling to 30 s), logging once when the store goes and once when it returns.
 */
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import { listenForChanges } from '../store/change-feed.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import { latestChange } from '../store/changes.ts';
import type { Store } from '../store/store.ts';
import type { Gateway } from './server.ts';

const storeUp = new Gauge({ name: 'portico_gateway_store_reachable', help: '1 while the gateway can read the store, 0 while it serves its last snapshot without it' });
const snapshotChange = new Gauge({ name: 'portico_gateway_snapshot_change', help: 'The store change number the current snapshot reflects' });

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
}

export function startSnapshotSync(options: SyncOptions): SnapshotSync {
  const { gateway, store, logger } = options;
  const pollMs = options.pollMs ?? 1000;
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
    if (up) logger.info('store reachable again; snapshot catching up');
    else logger.warn({ err: error }, 'store unreachable; serving the last snapshot');
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
    try {
      const change = await latestChange(store.db);
      if (change !== gateway.current?.change) await reload();
      else markReachable(true);
    } catch (error) {
      markReachable(false, error);
    }
    delay = reachable ? pollMs : Math.min(delay * 2, 30_000);
    if (!closed) {
      timer = setTimeout(() => void poll(), delay);
      timer.unref();
    }
  };
  timer = setTimeout(() => void poll(), pollMs);
  timer.unref();

  const onChange = () => void reload();
  options.bus?.on('change', onChange);
  const feed: ChangeFeed | undefined = options.listenUrl ? listenForChanges(options.listenUrl, onChange, logger) : undefined;

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
