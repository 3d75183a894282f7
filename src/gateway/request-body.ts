/**
 * The request-body phase: after the plan limits, before the assembly. The body is read whole (the
 * assembly may read `request.body` more than once), bounded by `PORTICO_MAX_REQUEST_BYTES`: larger
 * is a 413 before any policy runs, whether the length is declared or the body is chunked. A body
 * with a `Content-Encoding` is decoded here, within the same bound on its decoded size, so the
 * policies check the bytes the backend will read (content-coding.ts).
 */
import type { IncomingMessage } from 'node:http';
import { PorticoError } from '../errors.ts';
import { ConsumerClosedError } from '../policies/types.ts';
import { contentCodings, decodeContent } from '../http/content-coding.ts';
import { readBounded } from '../http/read-bounded.ts';
import type { CompiledOperation } from './snapshot.ts';

const bodylessMethods = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** Whether the request announces a body (RFC 9112 §6.3: a length, or a transfer coding). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The request's body, or undefined for a bodyless method that sends none (answered without a
 * promise: most calls are GETs).
 * @throws PorticoError `GW_PAYLOAD_TOO_LARGE` (413) past `limit` bytes; `GW_MISSING_PARAMETER`
 *   (400) when the operation requires a body and none came.
 */
export function readRequestBody(
  req: IncomingMessage,
  operation: Pick<CompiledOperation, 'bodyRequired'>,
  limit: number,
): Buffer | undefined | Promise<Buffer | undefined> {
  if (bodylessMethods.has(req.method ?? 'GET') && !hasBody(req)) return required(undefined, operation);
  const coded = req.headers['content-encoding'];
  if (coded === undefined) return readLimited(req, limit).then((body) => required(body, operation));
  const codings = contentCodings(coded);
  if (codings === undefined) {
    req.resume();
    throw new PorticoError('GW_BAD_HEADER', { name: 'Content-Encoding', reason: 'only gzip, deflate and br are read' });
  }
  return readLimited(req, limit)
    .then((body) => decoded(req, body, codings, limit))
    .then((body) => required(body, operation));
}

/**
 * The body with its codings undone; `Content-Encoding` leaves the request headers (they become
 * `message.headers`, which invoke forwards) and a `Content-Length` states the decoded length.
 */
async function decoded(req: IncomingMessage, body: Buffer, codings: string[], limit: number): Promise<Buffer> {
  const plain = await decodeContent(body, codings, {
    limit,
    tooLarge: () => new PorticoError('GW_PAYLOAD_TOO_LARGE', { limit }),
    corrupt: (coding) => new PorticoError('GW_BAD_REQUEST_BODY', { reason: `it is not valid ${coding}` }),
  });
  delete req.headers['content-encoding'];
  if (req.headers['content-length'] !== undefined) req.headers['content-length'] = String(plain.length);
  return plain;
}

function required(body: Buffer | undefined, operation: Pick<CompiledOperation, 'bodyRequired'>): Buffer | undefined {
  if (operation.bodyRequired && (body === undefined || body.length === 0))
    throw new PorticoError('GW_MISSING_PARAMETER', { name: 'body', in: 'body' });
  return body;
}

function readLimited(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new PorticoError('GW_PAYLOAD_TOO_LARGE', { limit });
  const declared = Number(req.headers['content-length']);
  // A declared length over the limit is refused before a byte is read.
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  // A consumer that leaves mid-upload ends the read with the stream's error ("aborted"): it is
  // recorded as 499, as one that leaves during the call is, not as the gateway's own failure.
  return readBounded(req, { limit, tooLarge, rest: 'drain' }).catch((error: unknown) => {
    if (req.destroyed && !(error instanceof PorticoError)) throw new ConsumerClosedError({ cause: error });
    throw error;
  });
}
