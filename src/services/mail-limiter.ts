/**
 * How many account emails go out per recipient and per client address, in memory: links by
 * email must not become a way to flood someone's mailbox (sign-up with their address, "forgot
 * password" over and over) or to send mail in bulk from one client.
 */
export interface MailLimits {
  /** Emails per recipient (catalog and address) within the window. */
  perRecipient: number;
  /** Emails a single client address may cause within the window, all recipients together. */
  perClient: number;
  windowMs: number;
  /** Upper bound on tracked keys, so many distinct addresses cannot grow memory without end. */
  maxKeys: number;
}

/** Three emails per recipient and twenty per client address in fifteen minutes. */
export const defaultMailLimits: MailLimits = {
  perRecipient: 3,
  perClient: 20,
  windowMs: 15 * 60_000,
  maxKeys: 100_000,
};

export class MailLimiter {
  private readonly sent = new Map<string, number[]>();

  constructor(readonly limits: MailLimits = defaultMailLimits) {}

  /**
   * Counts one email to `recipient` caused by `client` (undefined for a signed-in owner) and
   * answers 0; or, when a limit is reached, counts nothing and answers the seconds to wait.
   */
  take(recipient: string, client: string | undefined, now = Date.now()): number {
    const keys: Array<[string, number]> = [[`to|${recipient}`, this.limits.perRecipient]];
    if (client !== undefined) keys.push([`client|${client}`, this.limits.perClient]);
    const wait = Math.max(...keys.map(([key, max]) => this.waitSeconds(key, max, now)));
    if (wait > 0) return wait;
    for (const [key] of keys) this.record(key, now);
    return 0;
  }

  private recent(key: string, now: number): number[] {
    const times = (this.sent.get(key) ?? []).filter((t) => t > now - this.limits.windowMs);
    if (times.length === 0) this.sent.delete(key);
    else this.sent.set(key, times);
    return times;
  }

  private waitSeconds(key: string, max: number, now: number): number {
    const times = this.recent(key, now);
    if (times.length < max) return 0;
    return Math.max(1, Math.ceil((times[0] + this.limits.windowMs - now) / 1000));
  }

  private record(key: string, now: number): void {
    if (!this.sent.has(key) && this.sent.size >= this.limits.maxKeys) {
      // The oldest key goes first: a flood of new addresses forgets old ones, never the limit itself.
      const oldest = this.sent.keys().next().value;
      if (oldest !== undefined) this.sent.delete(oldest);
    }
    this.sent.set(key, [...this.recent(key, now), now]);
  }
}
