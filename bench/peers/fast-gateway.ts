/**
 * Peer: `fast-gateway` 5 (restana + fast-proxy-lite, whose agent keeps connections alive by
 * default), one catch-all route, no middlewares, the services endpoint off.
 */
import gateway from 'fast-gateway';
import { announce, envPort, exitOnSignal } from '../lib/announce.ts';

const upstream = `http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`;
const server = gateway({
  enableServicesEndpoint: false,
  routes: [
    {
      // '' + the default pathRegex '/*' = every path, forwarded unchanged ('/' would make '//*').
      prefix: '',
      target: upstream,
      proxyConfig: { keepAlive: true, maxSockets: 128, maxFreeSockets: 128 },
    },
  ],
});
const port = envPort('BENCH_PORT', 0);
const http = await server.start(port, '127.0.0.1');
const address = http.address() as { port: number };
announce({ port: address.port });
exitOnSignal(() => server.close());
