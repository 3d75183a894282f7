/**
 * The size bound on captured payloads (PORTICO_ANALYTICS_MAX_PAYLOAD), in UTF-8 bytes: a body at
 * the bound is kept whole, one byte over is cut and says by how much, whatever characters it is
 * made of (the bound is checked without a copy when the text is short enough to be sure).
 */
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { buildActivityEvent } from '../../src/gateway/activity.ts';
import type { CompiledApi } from '../../src/gateway/snapshot.ts';

const api = {
  name: 'orders',
  version: '1.0.0',
  orgName: 'acme',
  catalogName: 'sandbox',
  definition: { activityLog: { enabled: true, successContent: 'payload', errorContent: 'payload' } },
  credentialNames: { headers: new Set<string>(), query: new Set<string>() },
} as unknown as CompiledApi;

function captured(body: string | Buffer, limit: number): { request: string | null; response: string | null } {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/acme/sandbox/orders';
  req.headers = { host: 'gw' };
  const event = buildActivityEvent({
    req,
    responseHeaders: () => ({}),
    status: 200,
    txId: 'tx',
    latencyMs: 1,
    api,
    operation: undefined,
    clientId: undefined,
    credential: undefined,
    subscription: undefined,
    backendMs: 1,
    errorName: undefined,
    requestBody: typeof body === 'string' ? Buffer.from(body) : body,
    responseBody: body,
    maxPayloadBytes: limit,
  })!;
  return { request: event.request_body ?? null, response: event.response_body ?? null };
}

describe('payload capture is bounded in UTF-8 bytes', () => {
  const cases: Array<[string, string, number, string]> = [
    ['ASCII at the bound', 'a'.repeat(10), 10, 'a'.repeat(10)],
    ['ASCII one byte over', 'a'.repeat(11), 10, `${'a'.repeat(10)}…[truncated 1 bytes]`],
    ['three-byte characters within the bound (9 bytes)', '€€€', 10, '€€€'],
    [
      'three-byte characters over it (12 bytes)',
      '€€€€',
      10,
      `${Buffer.from('€€€€').subarray(0, 10).toString('utf8')}…[truncated 2 bytes]`,
    ],
    ['four-byte characters within the bound (8 bytes in 4 UTF-16 units)', '😀😀', 10, '😀😀'],
    [
      'four-byte characters over it (12 bytes)',
      '😀😀😀',
      10,
      `${Buffer.from('😀😀😀').subarray(0, 10).toString('utf8')}…[truncated 2 bytes]`,
    ],
    ['two-byte characters exactly at the bound', 'é'.repeat(5), 10, 'é'.repeat(5)],
    ['two-byte characters one over', `${'é'.repeat(5)}a`, 10, `${'é'.repeat(5)}…[truncated 1 bytes]`],
    ['empty', '', 0, ''],
    ['a zero bound', 'a', 0, '…[truncated 1 bytes]'],
  ];
  for (const [name, body, limit, expected] of cases) {
    test(name, () => {
      assert.deepEqual(captured(body, limit), { request: expected, response: expected });
    });
  }
});
