/**
 * The latency generator (bench/open-loop.ts, issue 18) and its response parser
 * (bench/lib/http-response.ts): responses framed right however they are split, malformed ones
 * refused; every request of a run counted exactly against real servers (Content-Length, chunked,
 * split writes, 404s, garbage), and a stalling server's delay measured from each request's due
 * time, including the requests that waited behind it for the connection.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { MALFORMED, NEED_MORE, ResponseParser } from '../../bench/lib/http-response.ts';
import { runOpenLoop } from '../../bench/lib/load.ts';
import type { OpenLoopResult } from '../../bench/lib/load.ts';

const generator = fileURLToPath(new URL('../../bench/open-loop.ts', import.meta.url));

interface Completion {
  status: number;
  end: number;
  chunked: boolean;
  close: boolean;
}

/** Feeds `pieces` to one parser; every response completed, with its end as an offset in the whole stream. */
function parse(pieces: Buffer[]): Completion[] | 'malformed' {
  const parser = new ResponseParser();
  const done: Completion[] = [];
  let base = 0;
  for (const piece of pieces) {
    let at = 0;
    for (;;) {
      const end = parser.execute(piece, at);
      if (end === MALFORMED) return 'malformed';
      if (end === NEED_MORE) break;
      done.push({ status: parser.status, end: base + end, chunked: parser.chunked, close: parser.close });
      at = end;
      if (at === piece.length) break;
    }
    base += piece.length;
  }
  return done;
}

const responses = [
  // The body holds what a scanning parser would take for the end of a head and a new response.
  'HTTP/1.1 200 OK\r\nContent-Length: 23\r\nX-A: b\r\n\r\n\r\n\r\nHTTP/1.1 500 Oops\r\n',
  'HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n',
  'HTTP/1.1 200 OK\r\nTRANSFER-ENCODING: chunked\r\n\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n',
  'HTTP/1.1 204 No Content\r\n\r\n',
  'HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n',
  'HTTP/1.1 503 Service Unavailable\nConnection: keep-alive, Close\nContent-Length: 2\n\nno',
];
const stream = Buffer.from(responses.join(''), 'latin1');
const expected: Completion[] = [];
{
  const statuses = [200, 404, 200, 204, 302, 503];
  let end = 0;
  responses.forEach((text, i) => {
    end += Buffer.byteLength(text, 'latin1');
    expected.push({ status: statuses[i], end, chunked: i === 2, close: i === 5 });
  });
}

describe('the response parser', () => {
  test('frames several responses in one read, each at its end', () => {
    assert.deepEqual(parse([stream]), expected);
  });

  test('frames them the same split at every byte, and byte by byte', () => {
    for (let split = 1; split < stream.length; split++) {
      assert.deepEqual(parse([stream.subarray(0, split), stream.subarray(split)]), expected, `split at ${split}`);
    }
    const bytes = [...stream].map((byte) => Buffer.from([byte]));
    assert.deepEqual(parse(bytes), expected);
  });

  test('reads only up to `end` of a reused buffer, whatever lies past it', () => {
    // The generator reads every connection into one buffer: bytes past a read's end are stale.
    const reused = Buffer.alloc(stream.length + 64, 'HTTP/1.1 500 Stale\r\nContent-Length: 0\r\n\r\n');
    const parser = new ResponseParser();
    const done: number[] = [];
    for (let from = 0; from < stream.length; from += 7) {
      const length = Math.min(7, stream.length - from);
      stream.copy(reused, 0, from, from + length);
      let at = 0;
      while (at < length) {
        const end = parser.execute(reused, at, length);
        assert.notEqual(end, MALFORMED);
        if (end === NEED_MORE) break;
        done.push(parser.status);
        at = end;
      }
    }
    assert.deepEqual(
      done,
      expected.map((c) => c.status),
    );
  });

  test('a body with neither length nor chunking ends with the connection', () => {
    const parser = new ResponseParser();
    assert.equal(parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nX: y\r\n\r\nsome body'), 0), NEED_MORE);
    assert.equal(parser.execute(Buffer.from(' and more'), 0), NEED_MORE);
    assert.equal(parser.finish(), true);
    assert.equal(parser.status, 200);
    // A head cut off by the close is not an answer.
    const cut = new ResponseParser();
    assert.equal(cut.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Le'), 0), NEED_MORE);
    assert.equal(cut.inResponse, true);
    assert.equal(cut.finish(), false);
  });

  test('refuses what it cannot frame', () => {
    const bad = [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 20 OK\r\n\r\n',
      'HTTP/1.1 2000 OK\r\n\r\n',
      'HTTP/1.1 2x0 OK\r\n\r\n',
      'ICY 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n',
      'HTTP/1.1 200 OK\r\n: no name\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n',
      `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(9000)}\r\n\r\n`,
    ];
    for (const text of bad) assert.equal(parse([Buffer.from(text, 'latin1')]), 'malformed', text.slice(0, 60));
  });
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x?y=1`)),
  );
}

async function withServer(
  server: Server,
  options: { rate: number; seconds: number; connections?: number; headers?: Record<string, string> },
): Promise<OpenLoopResult> {
  const url = await listen(server);
  try {
    return await runOpenLoop({
      script: ['--import', 'tsx', generator],
      url,
      headers: options.headers ?? {},
      ...options,
    });
  } finally {
    if ('closeAllConnections' in server) (server as HttpServer).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A node:http server answering with `answer` (the request's number from 1, the request, the response). */
function httpServer(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void): {
  server: ReturnType<typeof createServer>;
  count: () => number;
} {
  let n = 0;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => answer(++n, req, res));
  return { server, count: () => n };
}

describe('the open-loop generator', () => {
  test('counts every request exactly against Content-Length answers, a 404 as an error', async () => {
    const seen: string[] = [];
    const { server, count } = httpServer((n, req, res) => {
      if (n <= 3) seen.push(`${req.method} ${req.url} ${req.headers.host} ${req.headers['x-api-key']}`);
      const body = n % 100 === 0 ? 'no' : '{"ok":true}';
      res.writeHead(n % 100 === 0 ? 404 : 200, { 'content-length': body.length }).end(body);
    });
    const result = await withServer(server, { rate: 1000, seconds: 1, headers: { 'X-Api-Key': 'k1' } });
    assert.equal(count(), 1000);
    assert.equal(result.requests, 1000);
    assert.equal(result.errors, 10);
    assert.equal(result.unanswered, 0);
    assert.equal(result.chunkedResponses, 0);
    assert.equal(result.malformed, 0);
    assert.match(seen[0], /^GET \/x\?y=1 127\.0\.0\.1:\d+ k1$/);
  });

  test('counts chunked answers (split writes, 103 Early Hints first) exactly', async () => {
    const { server, count } = httpServer((n, req, res) => {
      if (n % 7 === 0) res.writeEarlyHints({ link: '</a.css>; rel=preload' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"part":');
      setImmediate(() => res.end(`${n}}`));
    });
    const result = await withServer(server, { rate: 1000, seconds: 1 });
    assert.equal(count(), 1000);
    assert.equal(result.requests, 1000);
    assert.equal(result.errors, 0);
    assert.equal(result.chunkedResponses, 1000);
  });

  test('a malformed answer is an error and its connection is opened again; the rest are answered', async () => {
    let n = 0;
    const sockets = new Set<Socket>();
    const server = createNetServer((socket) => {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('data', () => {
        n++;
        if (n % 50 === 0) return socket.write('HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n');
        // A response in three writes, across turns of the event loop.
        socket.write('HTTP/1.1 200 OK\r\nContent-');
        setImmediate(() => {
          socket.write('Length: 4\r\n\r\nbo');
          setImmediate(() => socket.write('dy'));
        });
      });
    });
    const result = await withServer(server, { rate: 1000, seconds: 1, connections: 8 });
    for (const socket of sockets) socket.destroy();
    assert.equal(n, 1000);
    assert.equal(result.malformed, 20);
    assert.equal(result.requests, 980);
    assert.equal(result.errors, 20);
    assert.equal(result.transportErrors, 0);
  });

  test('a 50 ms stall every 500th request shows in p99.9 and max', async () => {
    const { server, count } = httpServer((n, req, res) => {
      const answer = () => res.writeHead(200, { 'content-length': 2 }).end('ok');
      if (n % 500 === 0) setTimeout(answer, 50);
      else answer();
    });
    const result = await withServer(server, { rate: 1000, seconds: 2 });
    assert.equal(count(), 2000);
    assert.equal(result.requests, 2000);
    assert.equal(result.errors, 0);
    assert.ok(result.maxMs >= 50, `max ${result.maxMs}`);
    assert.ok(result.p999Ms >= 50, `p99.9 ${result.p999Ms}`);
  });

  test('requests due while the only connection is stalled count from their due time, not from their send', async () => {
    const { server, count } = httpServer((n, req, res) => {
      // The whole server stops for 50 ms (at the 250th and 750th, so requests come after both):
      // the ~25 requests due meanwhile wait in the generator for the connection.
      if (n % 500 === 250) {
        const until = performance.now() + 50;
        while (performance.now() < until);
      }
      res.writeHead(200, { 'content-length': 2 }).end('ok');
    });
    const result = await withServer(server, { rate: 500, seconds: 2, connections: 1 });
    assert.equal(count(), 1000);
    assert.equal(result.requests, 1000);
    assert.ok(result.waitedForConnection! >= 30, `waited ${result.waitedForConnection}`);
    // ~50 of 1 000 answers were due during a stall: the 10 slowest all waited out most of one.
    assert.ok(result.p99Ms >= 25, `p99 ${result.p99Ms}`);
    assert.ok(result.maxMs >= 50, `max ${result.maxMs}`);
  });
});
