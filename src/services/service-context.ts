/** What every service function is given, and the helpers they share. */
import { PorticoError } from '../errors.ts';
import type { SignInLimiter } from '../web/sign-in-limiter.ts';
import type { Db, Store } from '../store/store.ts';
import { commitChange } from './change-bus.ts';
import type { ChangeBus } from './change-bus.ts';
import type { ChangeKind } from '../store/changes.ts';

export interface ServiceContext {
  readonly store: Store;
  readonly bus: ChangeBus;
  /** One limiter for every sign-in (portal, console, `POST /api/login`), so none is a way around another. */
  readonly signInLimiter: SignInLimiter;
  /** How much a consumer organization may hold (the settings; {@link defaultConsumerLimits} in a bare service). */
  readonly consumerLimits: ConsumerLimits;
}

/** How much a consumer organization may hold: each app and credential is a client id in every gateway's snapshot. */
export interface ConsumerLimits {
  /** `PORTICO_MAX_APPS_PER_CONSUMER_ORG` */
  appsPerConsumerOrg: number;
  /** `PORTICO_MAX_CREDENTIALS_PER_APP` */
  credentialsPerApp: number;
}

export const defaultConsumerLimits: ConsumerLimits = { appsPerConsumerOrg: 100, credentialsPerApp: 10 };

/** Runs `work` as one announced change (see `commitChange`), naming what it touched where known. */
export function change<T>(
  context: ServiceContext,
  kind: ChangeKind,
  work: (trx: Db) => Promise<T>,
  ref?: string | ((value: T) => string),
): Promise<T> {
  return commitChange(context.store, context.bus, kind, work, ref);
}

export function notFound(kind: string, id: string): PorticoError {
  return new PorticoError('MGMT_NOT_FOUND', { kind, id });
}
