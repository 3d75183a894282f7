/**
 * Counters shared by the gateway workers of one machine when there is no Redis: the primary
 * process holds one memory store and answers each worker's hit over the cluster IPC channel,
 * so N workers together admit exactly a plan's limit. One IPC round trip per counted call.
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { InFlight } from '../in-flight.ts';
import { backendFailureDecision } from './decision.ts';
import { createMemoryCounterStore } from './memory.ts';
import type { CounterStore, LimitDecision, LimitRule } from './types.ts';

interface HitRequest {
  type: 'portico:hit';
  /** The waiting hit's slot in the worker's register, and its number (a slot is reused). */
  slot: number;
  id: number;
  key: string;
  rules: readonly LimitRule[];
}

interface HitAnswer {
  type: 'portico:hit-result';
  slot: number;
  id: number;
  decision: LimitDecision;
}

function isHitRequest(message: unknown): message is HitRequest {
  return typeof message === 'object' && message !== null && (message as HitRequest).type === 'portico:hit';
}

function isHitAnswer(message: unknown): message is HitAnswer {
  return typeof message === 'object' && message !== null && (message as HitAnswer).type === 'portico:hit-result';
}

/** In the primary: answers the workers' hits from one memory store. Returns a stop function. */
export function servePrimaryCounters(): () => Promise<void> {
  const store = createMemoryCounterStore();
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isHitRequest(message)) return;
    const decision = store.hitSync ? store.hitSync(message.key, message.rules) : undefined;
    const answer = (d: LimitDecision) => {
      if (worker.isConnected())
        worker.send({
          type: 'portico:hit-result',
          slot: message.slot,
          id: message.id,
          decision: { ...d, rules: undefined },
        } satisfies HitAnswer);
    };
    if (decision) answer(decision);
    else void store.hit(message.key, message.rules).then(answer);
  };
  cluster.on('message', onMessage);
  return async () => {
    cluster.off('message', onMessage);
    await store.close();
  };
}

/** In a worker: a counter store whose counting happens in the primary. */
export function createWorkerCounterStore(options: { failOpen: boolean; timeoutMs?: number }): CounterStore {
  // Not a Map by id: one entry per counted call is what in-flight.ts is for.
  const pending = new InFlight<{
    id: number;
    resolve: (d: LimitDecision) => void;
    rules: readonly LimitRule[];
    timer: NodeJS.Timeout;
  }>();
  let nextId = 0;
  const timeoutMs = options.timeoutMs ?? 1000;
  // Hit `id` taken from `slot`, if it still waits there: an answer that comes after its hit timed
  // out finds another hit, or none, in the slot.
  const takeHit = (slot: number, id: number) => (pending.get(slot)?.id === id ? pending.take(slot) : undefined);
  const onMessage = (message: unknown) => {
    if (!isHitAnswer(message)) return;
    const waiting = takeHit(message.slot, message.id);
    if (!waiting) return;
    clearTimeout(waiting.timer);
    // The rules do not cross the channel: put back the caller's, which headers are cached on.
    waiting.resolve({ ...message.decision, rules: waiting.rules });
  };
  process.on('message', onMessage);
  return {
    kind: 'memory',
    hit(key, rules) {
      return new Promise((resolve) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          takeHit(slot, id);
          resolve(backendFailureDecision(rules, options.failOpen, 'the primary process did not answer'));
        }, timeoutMs);
        timer.unref();
        const slot = pending.add({ id, resolve, rules, timer });
        if (!process.send?.({ type: 'portico:hit', slot, id, key, rules } satisfies HitRequest)) {
          // Not sent (no channel): decide now.
          if (!process.connected) {
            pending.take(slot);
            clearTimeout(timer);
            resolve(backendFailureDecision(rules, options.failOpen, 'no channel to the primary process'));
          }
        }
      });
    },
    async close() {
      process.off('message', onMessage);
      // A hit still waiting is decided now, as a primary that does not answer: none hangs.
      pending.forEach((waiting, slot) => {
        clearTimeout(waiting.timer);
        pending.take(slot);
        waiting.resolve(backendFailureDecision(waiting.rules, options.failOpen, 'the counter store closed'));
      });
    },
  };
}
