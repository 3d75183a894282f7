/**
 * Limits password checks per account (with the client address) and per client address, in
 * memory, for every sign-in: the portal, the console and the management API's `POST /api/login`
 * (OWASP Authentication cheat sheet, "Protect against automated attacks"); and the portal's
 * current-password check before a password change, per account from any address.
 *
 * An attempt is reserved *before* the password is verified and counts as a failure until it
 * succeeds: argon2 is asynchronous, so a limit checked before the verify and recorded after it
 * lets N parallel guesses through; with the reservation, at most `max` are ever verified.
 */
import { PorticoError } from '../errors.ts';

export interface SignInLimiterOptions {
  /** Failed (or still running) attempts allowed per account and address within the window. */
  max: number;
  /** Failed (or still running) attempts allowed per client address, all accounts together. */
  addressMax: number;
  windowMs: number;
  /** Upper bound on tracked keys, so a flood of distinct names cannot grow memory without end. */
  maxKeys?: number;
}

/** Who is signing in: `account` is namespaced by the caller (`portal|<catalog>|<email>`, `provider|<name>`). */
export interface SignInAttempt {
  account: string;
  address: string;
  /**
   * Count the account's attempts from every address together. For a check only a signed-in
   * session can make (the current password on the change form): no stranger can use up the
   * account's attempts, and a stolen session gains nothing by changing address.
   */
  accountWide?: boolean;
}

/** Five failures per account and address, fifty per address, in five minutes. */
export const defaultSignInLimits: SignInLimiterOptions = { max: 5, addressMax: 50, windowMs: 5 * 60_000 };

/** Reserves each sign-in attempt before its password check; see the module comment. */
export class SignInLimiter {
  private readonly attempts = new Map<string, number[]>();
  private readonly maxKeys: number;

  constructor(private readonly options: SignInLimiterOptions = defaultSignInLimits) {
    this.maxKeys = options.maxKeys ?? 100_000;
  }

  /**
   * Runs `verify` if the attempt fits the limits, else throws MGMT_TOO_MANY_ATTEMPTS (with
   * `seconds`). A MGMT_BAD_CREDENTIALS from `verify` keeps the attempt counted; success clears
   * the account's count; any other error gives the reservation back.
   */
  async guard<T>(attempt: SignInAttempt, verify: () => Promise<T>, now = Date.now()): Promise<T> {
    const accountKey = attempt.accountWide ? `any|${attempt.account}` : `${attempt.address}|${attempt.account}`;
    const addressKey = `address|${attempt.address}`;
    const wait = Math.max(
      this.waitSeconds(accountKey, this.options.max, now),
      this.waitSeconds(addressKey, this.options.addressMax, now),
    );
    if (wait > 0) throw new PorticoError('MGMT_TOO_MANY_ATTEMPTS', { seconds: wait });
    this.reserve(accountKey, now);
    this.reserve(addressKey, now);
    try {
      const result = await verify();
      this.attempts.delete(accountKey);
      this.release(addressKey, now);
      return result;
    } catch (error) {
      if (error instanceof PorticoError && error.code === 'MGMT_BAD_CREDENTIALS') throw error;
      this.release(accountKey, now);
      this.release(addressKey, now);
      throw error;
    }
  }

  private recent(key: string, now: number): number[] {
    const kept = (this.attempts.get(key) ?? []).filter((ts) => now - ts < this.options.windowMs);
    if (kept.length === 0) this.attempts.delete(key);
    else this.attempts.set(key, kept);
    return kept;
  }

  /** Seconds until `key` has room again; 0 when it has room now. */
  private waitSeconds(key: string, max: number, now: number): number {
    const recent = this.recent(key, now);
    if (recent.length < max) return 0;
    return Math.max(1, Math.ceil((recent[recent.length - max] + this.options.windowMs - now) / 1000));
  }

  private reserve(key: string, now: number): void {
    if (this.attempts.size >= this.maxKeys && !this.attempts.has(key)) this.sweep(now);
    const recent = this.recent(key, now);
    recent.push(now);
    this.attempts.set(key, recent);
  }

  private release(key: string, stamp: number): void {
    const list = this.attempts.get(key);
    const index = list ? list.indexOf(stamp) : -1;
    if (index < 0) return;
    list!.splice(index, 1);
    if (list!.length === 0) this.attempts.delete(key);
  }

  /** Drops aged-out keys; when still full, the oldest-inserted keys go first. */
  private sweep(now: number): void {
    for (const key of [...this.attempts.keys()]) this.recent(key, now);
    for (const key of this.attempts.keys()) {
      if (this.attempts.size < this.maxKeys) break;
      this.attempts.delete(key);
    }
  }
}
