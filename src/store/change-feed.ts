/**
 * Change propagation between processes. Every change bumps the store's change counter (see
 * changes.ts); on PostgreSQL it also sends `NOTIFY portico_changes` in the same transaction,
 * so every node LISTENing hears of it the moment it commits. A node keeps one dedicated
 * connection for LISTEN and reconnects with back-off (capped at `retryMaxMs`) when it drops;
 * whoever sees the store answer again can call `reconnectNow()` to skip the wait. SQLite has no
 * notifications: nodes on one SQLite file rely on polling the counter.
 */
import pg from 'pg';
import type { Logger } from 'pino';

export const changeChannel = 'portico_changes';

export interface ChangeFeed {
  /** True while the LISTEN connection is up. */
  readonly listening: boolean;
  /** Connects at once when not listening (the store just answered again). */
  reconnectNow(): void;
  close(): Promise<void>;
}

/** First wait before reconnecting; it doubles up to the cap. */
const firstDelayMs = 250;

/**
 * LISTENs on PostgreSQL at `url`; calls `onChange` for each notification, and with `reconnect`
 * after each (re)connection so the caller catches up on what it missed. Losing and regaining
 * the connection is logged at debug level: the snapshot sync reports store outages once.
 */
export function listenForChanges(
  url: string,
  onChange: (kind: string) => void,
  logger: Logger,
  retryMaxMs = 1000,
): ChangeFeed {
  let client: pg.Client | undefined;
  let connecting = false;
  let closed = false;
  let delay = firstDelayMs;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (closed || client !== undefined || connecting) return;
    connecting = true;
    if (timer) clearTimeout(timer);
    timer = undefined;
    // TCP keepalive: a path that died without a reset (a cut link, a vanished host) ends the
    // connection once the system's probes go unanswered (Linux: 9 probes, 75 s apart, after
    // 10 s idle), and 'end' reconnects; without it, LISTEN waits for ever.
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    next.on('notification', (message) => onChange(message.payload ?? ''));
    next.on('error', () => {
      // 'end' follows and schedules the reconnect.
    });
    next.on('end', () => {
      if (closed || client !== next) return;
      client = undefined;
      logger.debug('change feed connection lost; reconnecting');
      schedule();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${changeChannel}`);
      connecting = false;
      if (closed) {
        await next.end().catch(() => {});
        return;
      }
      client = next;
      delay = firstDelayMs;
      logger.debug('change feed listening');
      // Anything committed while we were away: let the caller catch up.
      onChange('reconnect');
    } catch (error) {
      connecting = false;
      await next.end().catch(() => {});
      logger.debug({ err: error }, 'change feed connect failed');
      schedule();
    }
  };
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void connect(), delay);
    timer.unref();
    delay = Math.min(delay * 2, retryMaxMs);
  };
  void connect();
  return {
    get listening() {
      return client !== undefined;
    },
    reconnectNow() {
      void connect();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
