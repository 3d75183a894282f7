/**
 * The request-body phase and the one bounded reader it shares with invoke (src/http/read-bounded.ts),
 * on real streams: a declared length past the limit is refused before a byte is read, a chunked body
 * past it as soon as it crosses it, and the rest is drained or the stream destroyed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import { readRequestBody } from '../../../src/gateway/request-body.ts';
import { readBounded } from '../../../src/http/read-bounded.ts';

/** A request as node:http hands it over, its body pushed in the given chunks. */
function request(method: string, headers: Record<string, string>, chunks: string[]): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.headers = headers;
  for (const chunk of chunks) req.push(Buffer.from(chunk));
  req.push(null);
  return req;
}

const tooLarge = (error: unknown) =>
  error instanceof PorticoError && error.code === 'GW_PAYLOAD_TOO_LARGE' && error.status === 413;

describe('request-body phase', () => {
  test('a GET without a body is answered without a promise and without reading', () => {
    assert.equal(readRequestBody(request('GET', {}, []), { bodyRequired: false }, 10), undefined);
  });

  test('reads a chunked body whole', async () => {
    const req = request('POST', { 'transfer-encoding': 'chunked' }, ['{"a":', '1}']);
    const body = await readRequestBody(req, { bodyRequired: false }, 100);
    assert.equal(body?.toString(), '{"a":1}');
  });

  test('a declared Content-Length past the limit is a 413 before the body is read', async () => {
    const req = request('POST', { 'content-length': '11' }, ['hello world']);
    await assert.rejects(async () => readRequestBody(req, { bodyRequired: false }, 10), tooLarge);
  });

  test('a chunked body that crosses the limit is a 413, and the rest is drained', async () => {
    const req = request('POST', { 'transfer-encoding': 'chunked' }, ['12345', '67890', 'X', 'more']);
    await assert.rejects(async () => readRequestBody(req, { bodyRequired: false }, 10), tooLarge);
    if (!req.readableEnded) await once(req, 'end');
    assert.equal(req.readableEnded, true);
  });

  test('exactly the limit is accepted', async () => {
    const req = request('PUT', { 'content-length': '10' }, ['1234567890']);
    assert.equal((await readRequestBody(req, { bodyRequired: false }, 10))?.length, 10);
  });

  test('an operation that requires a body refuses an empty one with 400', async () => {
    const missing = (error: unknown) => error instanceof PorticoError && error.code === 'GW_MISSING_PARAMETER';
    assert.throws(() => readRequestBody(request('DELETE', {}, []), { bodyRequired: true }, 10), missing);
    const empty = request('POST', { 'transfer-encoding': 'chunked' }, []);
    await assert.rejects(async () => readRequestBody(empty, { bodyRequired: true }, 10), missing);
  });
});

describe('readBounded (shared with invoke)', () => {
  test('destroys the source past the limit when asked (a backend answer)', async () => {
    const source = new PassThrough();
    const read = readBounded(source, { limit: 4, tooLarge: () => new Error('too large'), rest: 'destroy' });
    source.write('abc');
    source.write('def');
    await assert.rejects(read, /too large/);
    assert.equal(source.destroyed, true);
  });

  test('passes the source error on', async () => {
    const source = new PassThrough();
    const read = readBounded(source, { limit: 4, tooLarge: () => new Error('too large'), rest: 'drain' });
    source.destroy(new Error('reset'));
    await assert.rejects(read, /reset/);
  });
});
