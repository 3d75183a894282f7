/**
 * Control, not a peer: about the least a Node.js proxy does — node:http in, one undici `Pool`
 * with keep-alive connections out through `dispatch` (the call Portico's invoke makes, without
 * `request()`'s stream and promise), the answer read whole and written back with its status and
 * content type; nothing checked, logged or counted. Its tail at the fixed rate is what node:http,
 * undici and this machine's placement (client and backend on core 0, the proxy on core 1) add
 * before any gateway work: the floor under portico-pass's "added p99 over direct" row (issue 18).
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { announce, envPort, exitOnSignal, portOf } from '../lib/announce.ts';

const upstream = new Pool(`http://127.0.0.1:${envPort('BENCH_UPSTREAM_PORT')}`, {
  connections: 128,
  keepAliveTimeout: 60_000,
});

class Forward implements Dispatcher.DispatchHandler {
  private statusCode = 502;
  private contentType: string | undefined;
  private readonly chunks: Buffer[] = [];

  constructor(private readonly res: ServerResponse) {}

  onRequestStart(): void {}

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.contentType = headers['content-type'];
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const headers: Record<string, string | number> = { 'content-length': body.length };
    if (this.contentType !== undefined) headers['content-type'] = this.contentType;
    this.res.writeHead(this.statusCode, headers).end(body);
  }

  onResponseError(): void {
    if (!this.res.headersSent) this.res.writeHead(502);
    this.res.end();
  }
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  upstream.dispatch({ method: 'GET', path: req.url ?? '/' }, new Forward(res));
});
server.listen(envPort('BENCH_PORT', 0), '127.0.0.1', () => announce({ port: portOf(server) }));
exitOnSignal(() => {
  server.closeAllConnections();
  void upstream.close();
});
