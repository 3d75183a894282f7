/**
 * An answer of the native OAuth provider written before the request's body was read to its end
 * (the 413 past readForm's 16 KiB, a 400 for a body that is not a form) closes the connection
 * once it is written, as the gateway's own answers do (test/gateway/early-answer-close.test.ts).
 * Found by a review: the connection stayed open and the rest of the body was read until the
 * request timeout, so a client sending a body that never ends held a connection, and the
 * gateway's reading, for as long.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chunk, exchangeRaw, rawBody, slowUpload } from '../helpers/raw-http.ts';
import { startOAuthPlatform } from './oauth-helpers.ts';
import type { OAuthPlatform } from './oauth-helpers.ts';

/** Far above what the test waits: a close seen in the test's time is the gateway's own doing. */
const requestTimeoutMs = 60_000;
/** What "closed at once" allows after the answer arrived. */
const closeWithinMs = 5000;
const upload = (url: string, head: string, piece: () => string) => slowUpload(url, head, piece, 2 * closeWithinMs);
const tokenPath = '/acme/sandbox/oauth/oauth2/token';

describe('native OAuth provider: an answer sent before the body was read closes the connection', () => {
  let o: OAuthPlatform;
  before(async () => {
    o = await startOAuthPlatform({ PORTICO_GATEWAY_REQUEST_TIMEOUT_MS: String(requestTimeoutMs) });
  });
  after(() => o?.close());

  const post = (type: string, framing: string) =>
    `POST ${tokenPath} HTTP/1.1\r\nHost: gateway\r\nContent-Type: ${type}\r\n${framing}\r\n`;
  const form = 'application/x-www-form-urlencoded';

  test('a 413 for a form past 16 KiB, a declared length and the body still coming, closes at once', async () => {
    const { answer, closedAfterMs } = await upload(o.p.t.gateway, post(form, 'Content-Length: 100000000\r\n'), () =>
      'a='.padEnd(2048, 'y'),
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /"error":"invalid_request"/);
    assert.ok(closedAfterMs < closeWithinMs, `closed ${closedAfterMs} ms after the 413`);
  });

  test('a 413 for a chunked form that crosses 16 KiB and never ends closes at once', async () => {
    const { answer, closedAfterMs } = await upload(o.p.t.gateway, post(form, 'Transfer-Encoding: chunked\r\n'), () =>
      chunk(2048),
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.ok(closedAfterMs < closeWithinMs, `closed ${closedAfterMs} ms after the 413`);
  });

  test('a 400 for a body that is not a form, refused before it is read, closes while the body still comes', async () => {
    const { answer, closedAfterMs } = await upload(
      o.p.t.gateway,
      post('text/plain', 'Transfer-Encoding: chunked\r\n'),
      () => chunk(100),
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    assert.match(answer, /application\/x-www-form-urlencoded/);
    assert.ok(closedAfterMs < closeWithinMs, `closed ${closedAfterMs} ms after the 400`);
  });

  test('a token request whose body was read whole keeps its connection for the next request', async () => {
    const auth = Buffer.from(`${o.app.clientId}:${o.app.clientSecret}`).toString('base64');
    const body = 'grant_type=client_credentials&scope=read';
    const request = (last: string) =>
      `POST ${tokenPath} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Basic ${auth}\r\n` +
      `Content-Type: ${form}\r\nContent-Length: ${body.length}\r\n${last}\r\n${body}`;
    const answer = await exchangeRaw(o.p.t.gateway, request('') + request('Connection: close\r\n'), 2);
    assert.deepEqual(answer.match(/HTTP\/1\.1 \d{3} /g), ['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
    const first = answer.slice(0, answer.indexOf('HTTP/1.1 200 ', 1));
    assert.doesNotMatch(first, /connection: close/i);
    assert.match(rawBody(first), /"access_token":/);
  });
});

describe('native OAuth provider while the node drains', () => {
  test('a token answer during the drain period closes its connection, as every gateway answer does', async () => {
    const o = await startOAuthPlatform({ PORTICO_DRAIN_SECONDS: '1' });
    let closing: Promise<void> | undefined;
    try {
      const { clientId, clientSecret } = o.app;
      const token = () =>
        fetch(`${o.issuer}/oauth2/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: 'grant_type=client_credentials&scope=read',
        });
      const before = await token();
      assert.equal(before.status, 200);
      assert.notEqual(before.headers.get('connection'), 'close');
      await before.arrayBuffer();
      closing = o.close();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const during = await token();
      assert.equal(during.status, 200, 'the provider still answers while draining');
      assert.equal(during.headers.get('connection'), 'close');
      await during.arrayBuffer();
    } finally {
      await (closing ?? o.close());
    }
  });
});
