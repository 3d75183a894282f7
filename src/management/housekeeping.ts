/**
 * Periodic clean-up run by management nodes: activity events past the retention period
 * (`PORTICO_ANALYTICS_RETENTION_DAYS`, 0 = keep all), expired sessions, emailed links and expired
 * OAuth rows (revocations, codes, refresh tokens: the gateway's revoked set is loaded from what is
 * left, so without this it only grows in the store). Deleting is
 * idempotent, so several management nodes doing it cause no harm.
 */
import type { Logger } from 'pino';
import { purgeExpiredAccountTokens } from '../store/account-tokens.ts';
import { purgeEvents } from '../store/analytics.ts';
import { pruneExpired } from '../store/oauth.ts';
import { purgeExpiredSessions } from '../store/sessions.ts';
import type { Store } from '../store/store.ts';

export interface HousekeepingOptions {
  store: Store;
  logger: Logger;
  retentionDays: number;
  intervalMs?: number;
}

/** One pass: what was deleted. */
export async function housekeep(
  options: HousekeepingOptions,
  now = Date.now(),
): Promise<{ events: number; sessions: number; oauth: number }> {
  const events =
    options.retentionDays > 0 ? await purgeEvents(options.store.db, now - options.retentionDays * 86_400_000) : 0;
  const sessions = await options.store.transaction((trx) => purgeExpiredSessions(trx));
  await purgeExpiredAccountTokens(options.store.db);
  const oauth = await pruneExpired(options.store.db, Math.floor(now / 1000));
  return { events, sessions, oauth };
}

/** Runs `housekeep` a minute after start, then every `intervalMs` (default one hour). */
export function startHousekeeping(options: HousekeepingOptions): () => void {
  const run = () => {
    housekeep(options)
      .then((deleted) => {
        if (deleted.events > 0 || deleted.sessions > 0 || deleted.oauth > 0) {
          options.logger.info(deleted, 'housekeeping: expired analytics events, sessions and OAuth rows deleted');
        }
      })
      .catch((error) => options.logger.warn({ err: error }, 'housekeeping failed; will try again'));
  };
  const first = setTimeout(run, 60_000);
  const every = setInterval(run, options.intervalMs ?? 3_600_000);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
