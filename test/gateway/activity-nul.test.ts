/**
 * Hostile input against the activity log: PostgreSQL cannot store U+0000 in text, and a batch of
 * events is one insert. A consumer who sends a client id `%00…` in the query, or a backend whose
 * answer carries a NUL byte (payload logged), must not make the batch fail, which would hold every
 * other caller's events with it until they are dropped. Each NUL is stored as U+FFFD (what a byte
 * that is not UTF-8 becomes), on either store, and the other events of the batch are stored.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { listEvents } from '../../src/store/analytics.ts';
import type { ActivityEvent } from '../../src/store/schema.ts';
import { secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { SecurityPlatform } from '../helpers/security-api.ts';
import { postgresTestStore } from '../helpers/stores.ts';
import type { TestStore } from '../helpers/stores.ts';

async function eventsFor(p: SecurityPlatform, txIds: string[]): Promise<ActivityEvent[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = await listEvents(p.t.platform.store.db, {}, 500);
    const found = txIds.map((id) => events.find((e) => e.tx_id === id));
    if (found.every((e) => e !== undefined)) return found as ActivityEvent[];
    if (Date.now() > deadline) throw new Error(`events not stored: ${txIds.filter((_, i) => !found[i]).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const stores: Array<{ name: string; env: () => Promise<{ env: Record<string, string>; db?: TestStore }> }> = [
  { name: 'sqlite', env: async () => ({ env: {} }) },
  {
    name: 'postgres',
    env: async () => {
      const db = await postgresTestStore();
      return { env: { PORTICO_DATABASE_URL: db.url }, db };
    },
  },
];

describe('issue-18 hardening: U+0000 in a logged value never stops the activity log', () => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** A real backend whose answer holds a NUL byte. */
  async function nulBackend(): Promise<string> {
    const server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ser\u0000ved'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  for (const store of stores) {
    test(`${store.name}: a client id and an answer with NUL are stored with U+FFFD, with the batch's other events`, async () => {
      const { env, db } = await store.env();
      const backend = await nulBackend();
      if (db) cleanups.push(() => db.dispose());
      // One batch for all three calls: the flush interval is long, a clean stop writes it.
      const p = await startSecurityPlatform({ ...env, PORTICO_ANALYTICS_FLUSH_MS: '300' });
      cleanups.push(() => p.close());
      await p.publish(
        secApi({
          schemes: { cid: { type: 'apiKey', in: 'query', name: 'client_id' } },
          security: [{ cid: [] }],
          ibm: {
            'activity-log': { enabled: true, 'success-content': 'payload', 'error-content': 'payload' },
            // The backend's answer also becomes the authenticated name (as a user-security policy writes it).
            assembly: {
              execute: [
                { invoke: { version: '2.0.0', 'target-url': backend } },
                {
                  'set-variable': { actions: [{ set: 'request.authenticated-credential', value: '$(message.body)' }] },
                },
              ],
            },
          },
        }),
      );
      const app = await p.newApp('default');
      const call = async (clientId: string) => {
        const response = await fetch(`${p.base}/thing?n=1&client_id=${clientId}`);
        return {
          status: response.status,
          body: await response.text(),
          tx: response.headers.get('x-global-transaction-id')!,
        };
      };
      const refused = await call('%00evil');
      const served = await call(app.clientId);
      const plain = await call('nobody');
      assert.equal(refused.status, 401);
      assert.equal(served.status, 200);
      assert.equal(served.body, 'ser\u0000ved', 'the consumer gets the answer as the backend sent it');
      assert.equal(plain.status, 401);

      const [refusedEvent, servedEvent, plainEvent] = await eventsFor(p, [refused.tx, served.tx, plain.tx]);
      assert.equal(refusedEvent.client_id, '\uFFFDevil');
      assert.equal(servedEvent.client_id, app.clientId);
      assert.equal(servedEvent.response_body, 'ser\uFFFDved');
      assert.equal(servedEvent.user_name, 'ser\uFFFDved');
      assert.equal(plainEvent.client_id, 'nobody');
    });
  }
});
