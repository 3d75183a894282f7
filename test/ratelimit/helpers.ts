/**
 * What the counter-store tests share: the backends under test (memory and the real Redis), a
 * fresh key prefix per run, and window alignment so fixed-window tests never straddle a boundary.
 */

import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryCounterStore } from '../../src/ratelimit/memory.ts';
import { createRedisCounterStore } from '../../src/ratelimit/redis.ts';
import type { CounterStore } from '../../src/ratelimit/types.ts';

export const REDIS_URL = process.env.PORTICO_TEST_REDIS ?? 'redis://127.0.0.1:6379';

/** A key prefix no other run (or concurrent test file) uses. */
export function freshKeyPrefix(label: string): string {
  return `portico-test:rl:${label}:${process.pid}:${Date.now()}:${Math.random().toString(36).slice(2, 8)}:`;
}

export interface Backend {
  name: 'memory' | 'redis';
  create(keyPrefix: string): CounterStore;
}

/** Every backend the shared suite runs against. */
export const backends: Backend[] = [
  { name: 'memory', create: () => createMemoryCounterStore() },
  {
    name: 'redis',
    create: (keyPrefix) => createRedisCounterStore({ url: REDIS_URL, failOpen: false, keyPrefix }),
  },
];

/**
 * Waits, when needed, so that at least `neededMs` remain in the current fixed window of
 * `windowMs` (windows are aligned on the epoch; Redis runs on this machine's clock).
 */
export async function awaitRoomInWindow(windowMs: number, neededMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await sleep(left + 10);
}

/** Waits for the start of the next window of `windowMs` (plus a little margin). */
export async function awaitNextWindow(windowMs: number): Promise<void> {
  await sleep(windowMs - (Date.now() % windowMs) + 10);
}

/** Deletes every key under `keyPrefix` (the keys would expire anyway; this keeps Redis tidy). */
export async function deleteRedisKeys(keyPrefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

/** Headers as an object, for exact comparisons. */
export function headerMap(headers: Array<[string, string]>): Record<string, string> {
  return Object.fromEntries(headers);
}
