/**
 * A small JSON client for the gateway's own calls to authorities (a JWKS endpoint, an RFC 7662
 * introspection endpoint): pooled undici connections, a deadline, and a bounded answer, so a
 * slow or huge answer costs a bounded time and memory.
 */
import type { Dispatcher } from 'undici';

export interface JsonAnswer {
  status: number;
  value: unknown;
}

export interface JsonRequest {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Calls `url` and parses a JSON answer of at most `maxBytes`.
 * @throws Error when the server cannot be reached in time, or answers too much or not JSON.
 */
export async function fetchJson(url: URL, dispatcher: Dispatcher, request: JsonRequest): Promise<JsonAnswer> {
  const signal = AbortSignal.timeout(request.timeoutMs);
  const response = await dispatcher.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: request.method,
    headers: { accept: 'application/json', ...request.headers },
    body: request.body,
    headersTimeout: request.timeoutMs,
    bodyTimeout: request.timeoutMs,
    signal,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > request.maxBytes) {
      response.body.destroy();
      throw new Error(`the answer is larger than ${request.maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { status: response.statusCode, value: JSON.parse(text) as unknown };
  } catch {
    throw new Error(`the answer (HTTP ${response.statusCode}) is not JSON`);
  }
}
