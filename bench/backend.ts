/**
 * The benchmark backend: node:http with keep-alive, answering every request with the same
 * small JSON body. Every target proxies to one instance of it, so only the proxy differs.
 *
 * `BENCH_BACKEND_PORT` (default 0 = any free port).
 */
import { createServer } from 'node:http';
import { announce, envPort, exitOnSignal, portOf } from './lib/announce.ts';

const body = Buffer.from(JSON.stringify({ id: 42, name: 'widget', price: 9.99, tags: ['bench', 'portico'] }));

const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0 }, function answer(req, res) {
  // Drain any request body so the connection stays reusable.
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;

server.listen(envPort('BENCH_BACKEND_PORT', 0), '127.0.0.1', () => announce({ port: portOf(server) }));
exitOnSignal(() => new Promise<void>((resolve) => server.close(() => resolve())));
