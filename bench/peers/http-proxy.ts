/**
 * Peer: `http-proxy` 1.18 as its README advises for performance — a keep-alive `http.Agent`
 * (without it every request opens a new upstream connection), no logging, bare forwarding.
 */
import { Agent, createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import httpProxy from 'http-proxy';
import { announce, envPort, exitOnSignal, portOf } from '../lib/announce.ts';

const upstream = `http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`;
const agent = new Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 128, keepAliveMsecs: 60_000 });
const proxy = httpProxy.createProxyServer({ target: upstream, agent });
proxy.on('error', (_error, _req, res) => {
  const out = res as ServerResponse;
  if (!out.headersSent) out.writeHead(502);
  out.end();
});
const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => proxy.web(req, res));
server.listen(envPort('BENCH_PORT', 0), '127.0.0.1', () => announce({ port: portOf(server) }));
exitOnSignal(() => {
  agent.destroy();
  server.closeAllConnections();
});
