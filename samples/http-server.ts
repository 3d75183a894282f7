// Plumbing shared by the demo backends: start/stop, bounded bodies, JSON replies.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a sample backend listens; port 0 picks a free port. */
export interface SampleServerOptions {
  port: number;
  host?: string;
}

/** A running sample backend. */
export interface RunningSample {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Handles one request; `baseUrl` is the server's own `http://host:port`. */
export type SampleHandler = (req: IncomingMessage, res: ServerResponse, baseUrl: string) => void | Promise<void>;

/** Thrown by readBody when the body exceeds its limit. */
export class BodyTooLargeError extends Error {
  readonly code = 'BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** Default cap on request bodies (1 MiB). */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Reads the whole request body as UTF-8, refusing more than `limit` bytes. */
export function readBody(req: IncomingMessage, limit = DEFAULT_BODY_LIMIT): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    // Drain without buffering so the keep-alive connection stays usable.
    req.resume();
    return Promise.reject(new BodyTooLargeError(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!tooLarge) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** Writes a JSON reply with an explicit length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Writes a text reply (XML, plain) with an explicit length. */
export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Parses the request target; the base is irrelevant, only path and query are used. */
export function requestUrl(req: IncomingMessage): URL {
  return new URL(req.url ?? '/', 'http://sample.invalid');
}

/**
 * The guard of a read-only JSON resource: the request's URL when its path is one of `paths` and
 * its method GET or HEAD (any body is discarded so the connection stays usable); otherwise a
 * 404 or 405 JSON answer has been sent and the result is undefined.
 */
export function readOnlyResource(req: IncomingMessage, res: ServerResponse, paths: readonly string[]): URL | undefined {
  const url = requestUrl(req);
  if (!paths.includes(url.pathname)) {
    sendJson(res, 404, { error: `no resource at ${url.pathname}` });
    return undefined;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendJson(res, 405, { error: `method ${req.method} not allowed` }, { allow: 'GET, HEAD' });
    return undefined;
  }
  req.resume();
  return url;
}
/** The base URL a client used to reach us, from a well-formed Host header, else the bound address. */
export function publicBaseUrl(req: IncomingMessage, boundUrl: string): string {
  const host = req.headers.host;
  // Only plain host[:port] values: the result ends up inside documents we serve.
  return host && /^[A-Za-z0-9.\-[\]:]{1,255}$/.test(host) ? `http://${host}` : boundUrl;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Starts a node:http server running `handler`; a handler that throws gets a 500, never a crash. */
export function startSampleServer(
  name: string,
  handler: SampleHandler,
  options: SampleServerOptions,
): Promise<RunningSample> {
  const host = options.host ?? '127.0.0.1';
  let baseUrl = '';
  const server = createServer({ keepAlive: true, requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    Promise.resolve()
      .then(() => handler(req, res, baseUrl))
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendJson(res, 500, {
          error: `${name}: ${error instanceof Error ? error.message : 'internal error'}`,
        });
      });
  });
  server.keepAliveTimeout = 5_000;
  // Malformed HTTP gets a 400 on the socket instead of an unhandled error.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    else socket.destroy();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      baseUrl = `http://${formatHost(host)}:${port}`;
      resolve({
        url: baseUrl,
        port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeIdleConnections();
          }),
      });
    });
  });
}
