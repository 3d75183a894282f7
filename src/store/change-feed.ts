/**
 * Change propagation between processes. Every change bumps the store's change counter (see
 * changes.ts); on PostgreSQL it also sends `NOTIFY portico_changes` in the same transaction,
 * so every node LISTENing hears of it the moment it commits. A node keeps one dedicated
 * connection for LISTEN and reconnects with back-off when it drops. SQLite has no
 * notifications: nodes on one SQLite file rely on polling the counter.
 */
import pg from 'pg';
import type { Logger } from 'pino';

export const changeChannel = 'portico_changes';

export interface ChangeFeed {
  close(): Promise<void>;
}

/** LISTENs on PostgreSQL at `url`; calls `onChange` for each notification. */
export function listenForChanges(url: string, onChange: (kind: string) => void, logger: Logger): ChangeFeed {
  let client: pg.Client | undefined;
  let closed = false;
  let delay = 500;
  let timer: NodeJS.Timeout | undefined;

  const connect = async () => {
    if (closed) return;
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    next.on('notification', (message) => onChange(message.payload ?? ''));
    next.on('error', () => {
      // 'end' follows and schedules the reconnect.
    });
    next.on('end', () => {
      if (closed || client !== next) return;
      client = undefined;
      logger.warn('change feed connection lost; reconnecting');
      schedule();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${changeChannel}`);
      client = next;
      if (delay > 500) logger.info('change feed connected again');
      delay = 500;
      // Anything committed while we were away: let the caller catch up.
      onChange('reconnect');
    } catch (error) {
      await next.end().catch(() => {});
      logger.debug({ err: error }, 'change feed connect failed');
      schedule();
    }
  };
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => void connect(), delay);
    timer.unref();
    delay = Math.min(delay * 2, 30_000);
  };
  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
