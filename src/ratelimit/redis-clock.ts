/**
 * Redis's clock as a node reckons it: the offset between Redis `TIME` and the node's steady clock,
 * which turns a caller's deadline into one the grant script can compare with `TIME`. Measured
 * on each connection and checked against the Redis time every grant reply carries, so a step of
 * either clock (a VM resumed, Redis's host set) is caught by the first reply after it.
 */
import type { Cluster, Redis } from 'ioredis';

export class RedisClock {
  /** Redis clock − node clock, ms. */
  private offset = 0;

  constructor(private readonly now: () => number) {}

  /** The node-clock time `t` on Redis's clock. */
  toRedis(t: number): number {
    return t + this.offset;
  }

  /**
   * Takes in a Redis time (whole ms) read between `sentAt` and `receivedAt` on the node's clock:
   * the true offset lies in `[redisMs − receivedAt, redisMs + 1 − sentAt]`. An offset outside it
   * is stale and moves to the middle; one inside stays, so a slow reply never blurs a good offset.
   * Returns whether the offset moved.
   */
  observe(redisMs: number, sentAt: number, receivedAt: number): boolean {
    const low = redisMs - receivedAt;
    const high = redisMs + 1 - sentAt;
    if (this.offset >= low && this.offset <= high) return false;
    this.offset = (low + high) / 2;
    return true;
  }

  /** Reads `TIME` (on each new connection), so that the first grants already carry a fair deadline. */
  async measure(client: Redis | Cluster): Promise<void> {
    try {
      const sentAt = this.now();
      const [seconds, micros] = await client.time();
      this.observe(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), sentAt, this.now());
    } catch {
      // Keep the last offset: every grant reply checks it, and the next 'ready' measures again.
    }
  }
}
