/**
 * Peer: `@fastify/http-proxy` 11 on Fastify 5, as its docs advise for throughput: logger off,
 * `@fastify/reply-from`'s undici pool with keep-alive connections, bare forwarding.
 */
import Fastify from 'fastify';
import proxy from '@fastify/http-proxy';
import { announce, envPort, exitOnSignal, portOf } from '../lib/announce.ts';

const upstream = `http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`;
const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
await app.register(proxy, {
  upstream,
  prefix: '/',
  undici: { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 },
});
await app.listen({ port: envPort('BENCH_PORT', 0), host: '127.0.0.1' });
announce({ port: portOf(app.server) });
exitOnSignal(() => app.close());
