/**
 * The gateway's listeners and their connections: timeouts, the cap on open connections, malformed
 * requests, and the zero-drop drain of a stop (SIGTERM): `/ready` turns 503 while traffic is still
 * served, then the listener closes, connections are closed as they fall idle, and only what is
 * still busy past the grace is cut.
 */
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionSettings {
  /** A request head, and a new connection's first request, must arrive within this long. */
  headersTimeoutMs: number;
  /** A whole request (head and body) must arrive within this long. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Open consumer connections at once; more are closed on arrival (0 = no cap). */
  maxConnections: number;
  /** How long a stop answers `/ready` 503 while still serving, before the listener closes. */
  drainMs: number;
}

export const defaultConnections: ConnectionSettings = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  drainMs: 0,
};

const clientErrorAnswers: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
};

/**
 * Answers a malformed or timed-out request as Node would, and always closes the connection: with
 * Node's own handling, some connections answered 408 by the header timeout were left open.
 */
function closeOnClientError(error: Error & { code?: string }, socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writable && socket.bytesWritten === 0) {
    socket.write(clientErrorAnswers[error.code ?? ''] ?? 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  }
  socket.destroy();
}

/**
 * The consumer listener. Node's header timeout starts with a request's first byte: a connection
 * that never sends one would stay open for good, so it gets the same time for its first request
 * (the request listener lifts it: a slow backend must not end the connection).
 */
export function consumerServer(settings: ConnectionSettings, listener: RequestListener): Server {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = settings;
  const server = createServer(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval (default 30 s): keep it well under them.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeoutMs / 4)),
    },
    listener,
  );
  if (maxConnections > 0) server.maxConnections = maxConnections;
  server.on('connection', (socket: Socket) => socket.setTimeout(headersTimeoutMs));
  server.on('clientError', closeOnClientError);
  return server;
}

/** The status listener (`/health`, `/ready`, `/metrics`): short timeouts, nothing else. */
export function statusServer(listener: RequestListener): Server {
  return createServer({ headersTimeout: 10_000, requestTimeout: 10_000 }, listener);
}

/** Listens; resolves once bound, rejects when the address cannot be bound. */
export function bind(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Stops a listener without dropping an answer: until every connection has ended, the ones that
 * fall idle are closed (a connection still writing an answer is not idle); past `graceMs`,
 * `cut()` runs (aborting backend calls) and the rest are closed.
 */
export async function drain(server: Server, graceMs: number, cut: () => void): Promise<void> {
  let ended = false;
  const closed = new Promise<void>((resolve) => server.close(() => resolve())).then(() => {
    ended = true;
  });
  const deadline = Date.now() + graceMs;
  while (!ended && Date.now() < deadline) {
    server.closeIdleConnections();
    await new Promise((r) => setTimeout(r, 20));
  }
  cut();
  server.closeAllConnections();
  await closed;
}

/** Closes a listener at once, connections included. */
export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
