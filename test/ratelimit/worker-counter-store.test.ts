/**
 * The counter store of a cluster worker without Redis (src/ratelimit/cluster.ts) waits for the
 * primary's answer to each hit in a slot of an in-flight register (src/in-flight.ts), and slots
 * are reused. An answer that arrives after its hit timed out must not decide the hit that took the
 * slot since: it would admit or refuse a call on another call's count, and limits would no longer
 * be exact. This test plays the primary, over a real IPC channel to a forked worker.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const child = fileURLToPath(new URL('../fixtures/processes/worker-counter-child.ts', import.meta.url));

interface Hit {
  type: 'portico:hit';
  slot: number;
  id: number;
}

test('a late answer from the primary does not decide the hit that reused its slot', async () => {
  const worker = fork(child, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const hits: Hit[] = [];
  const decisions = new Promise<{ first: Record<string, unknown>; second: Record<string, unknown> }>((resolve) => {
    worker.on('message', (message: Hit | { type: 'decisions'; first: never; second: never }) => {
      if (message.type === 'decisions') return resolve(message);
      hits.push(message);
      // The first hit goes unanswered past its timeout; once the second is asked, the first's
      // answer arrives late, an admission, then the second's own, a refusal.
      if (hits.length === 2) {
        const [late, current] = hits;
        worker.send({
          type: 'portico:hit-result',
          slot: late.slot,
          id: late.id,
          decision: { allowed: true, results: [] },
        });
        worker.send({
          type: 'portico:hit-result',
          slot: current.slot,
          id: current.id,
          decision: { allowed: false, results: [], retryAfterSeconds: 7 },
        });
      }
    });
  });
  try {
    const { first, second } = await decisions;
    assert.equal(hits.length, 2);
    assert.equal(hits[1].slot, hits[0].slot, 'the second hit reuses the first one’s slot (else this proves nothing)');
    assert.notEqual(hits[1].id, hits[0].id);
    assert.deepEqual(first, {
      allowed: false,
      results: [],
      backendError: 'the primary process did not answer',
      retryAfterSeconds: 1,
    });
    assert.deepEqual(second, { allowed: false, results: [], retryAfterSeconds: 7 }, 'decided by its own answer');
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = once(worker, 'exit');
      worker.kill();
      await exited;
    }
  }
});

test('closing the store decides the hits still waiting for the primary, as a primary that does not answer', async () => {
  const worker = fork(child, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, WORKER_COUNTER_CLOSE: '1' },
  });
  try {
    const answer = new Promise<Record<string, unknown>>((resolve) =>
      worker.on('message', (message: { type: string; first: Record<string, unknown> }) => {
        if (message.type === 'decisions') resolve(message.first);
      }),
    );
    const exited = once(worker, 'exit').then(() => undefined);
    // Without the decision the worker's hit waits forever and the worker exits with nothing sent.
    const decided = await Promise.race([answer, exited]);
    assert.deepEqual(decided, {
      allowed: false,
      results: [],
      backendError: 'the counter store closed',
      retryAfterSeconds: 1,
    });
  } finally {
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = once(worker, 'exit');
      worker.kill();
      await exited;
    }
  }
});
