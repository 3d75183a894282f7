/**
 * Several gateway processes share one real Redis: together they admit exactly the limit.
 */

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { REDIS_URL, awaitRoomInWindow, deleteRedisKeys, freshKeyPrefix } from './helpers.ts';

const HAMMER = fileURLToPath(new URL('./fixtures/hammer.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HOUR = 3_600_000;

interface Tally {
  admitted: number;
  rejected: number;
  backendErrors: number;
}

/** Starts one hammer process and resolves once it says `ready`. */
async function startHammer(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; tally: Promise<Tally> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', HAMMER, ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const tally = new Promise<Tally>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.startsWith('ready\n')) onReady();
    });
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as Tally);
      else reject(new Error(`hammer exited with ${code}: ${stderr}`));
    });
  });
  await Promise.race([ready, tally]);
  return { child, tally };
}

describe('counter store: redis, across processes', () => {
  const keyPrefix = freshKeyPrefix('processes');
  after(() => deleteRedisKeys(keyPrefix));

  // The timeout covers the wait for room in the hour: run in an hour's last two minutes, the test
  // waits for the next one (it timed out in a CI run that reached it at 11:58 UTC).
  const room = 120_000;
  it(
    'admits exactly the limit when two processes hit the same key concurrently',
    { timeout: 60_000 + room },
    async () => {
      await awaitRoomInWindow(HOUR, room);
      const args = [REDIS_URL, keyPrefix, 'shared-subscription', '300', '100', String(HOUR)];
      const hammers = await Promise.all([startHammer(args), startHammer(args)]);
      for (const { child } of hammers) child.stdin.end('go\n');
      const tallies = await Promise.all(hammers.map((h) => h.tally));

      assert.deepEqual(
        tallies.map((t) => t.backendErrors),
        [0, 0],
      );
      assert.equal(tallies[0].admitted + tallies[1].admitted, 100);
      assert.equal(tallies[0].rejected + tallies[1].rejected, 500);
    },
  );
});
