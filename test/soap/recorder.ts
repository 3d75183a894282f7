/**
 * A recording front for a real backend: every request is kept (headers, body) and forwarded
 * unchanged to `upstream`, whose answer is passed back. Lets a test count backend calls and
 * read the exact SOAP request the gateway sent, while the real sample service answers.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Recorder {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts a recorder; `answer` replies itself when given, else the request goes to `upstream`. */
export async function startRecorder(options: {
  upstream?: string;
  answer?: (request: RecordedRequest) => { status: number; contentType: string; body: string };
}): Promise<Recorder> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      if (options.answer !== undefined) {
        const reply = options.answer(recorded);
        res.writeHead(reply.status, { 'content-type': reply.contentType });
        res.end(reply.body);
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
      fetch(`${options.upstream}${recorded.path}`, {
        method: recorded.method,
        headers,
        body: recorded.body === '' ? undefined : recorded.body,
      })
        .then(async (upstream) => {
          res.writeHead(upstream.status, {
            'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
          });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        })
        .catch(() => {
          res.writeHead(599);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
