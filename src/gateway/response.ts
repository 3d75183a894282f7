/**
 * The response phase, last of the request (DESIGN §3.6): what `message` holds becomes the answer's
 * status, fields and body; CORS fields are added for an API that enables CORS; and every error,
 * wherever it was thrown, becomes one API Connect envelope through {@link errorAnswer}, with the
 * fields the error carries (`Allow`, `Retry-After`, `WWW-Authenticate`).
 */
import { STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PorticoError, errorEnvelope } from '../errors.ts';
import { hopByHopFields } from '../policies/http-fields.ts';
import { AssemblyError, ConsumerClosedError, RawBody } from '../policies/types.ts';
import type { MessageVar } from '../policies/types.ts';

/**
 * The response's header fields, gathered for one `res.writeHead(status, fields)` call (Node writes
 * a flat array as it is, without building its header object field by field). A field set again
 * under any case replaces the earlier one in its place, as `res.setHeader` does. A list of values
 * is written one line each (Node does so), as several `Set-Cookie` must be (RFC 6265 §3).
 */
export class ResponseHeaders {
  /** name, value, name, value… as writeHead takes them. */
  readonly fields: OutgoingHttpHeader[] = [];
  private readonly lower: string[] = [];

  set(name: string, value: OutgoingHttpHeader): void {
    const key = name.toLowerCase();
    const index = this.lower.indexOf(key);
    if (index < 0) {
      this.lower.push(key);
      this.fields.push(name, value);
    } else {
      this.fields[2 * index] = name;
      this.fields[2 * index + 1] = value;
    }
  }

  /** Sets each `[name, value]` pair in turn. */
  setAll(pairs: Iterable<readonly [string, string]>): void {
    for (const [name, value] of pairs) this.set(name, value);
  }

  has(name: string): boolean {
    return this.lower.includes(name.toLowerCase());
  }

  /** As `res.getHeaders()` gives them: lower-case names. */
  toObject(): Record<string, OutgoingHttpHeader> {
    const out: Record<string, OutgoingHttpHeader> = {};
    for (let i = 0; i < this.lower.length; i++) out[this.lower[i]] = this.fields[2 * i + 1];
    return out;
  }
}

/** One answer, ready to be written. */
export interface Answer {
  status: number;
  payload: Buffer | string | undefined;
  headers: ResponseHeaders;
  /** API Connect's name for the error the answer reports, for the activity log. */
  errorName?: string;
}

// `message.headers` starts as the request's headers; fields that only make sense on a request
// (RFC 9110 §10.1, §11.6) and the consumer's credentials never go back out in the response.
const requestOnly = new Set([
  ...['host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'expect', 'from'],
  ...['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'max-forwards', 'range'],
  ...['referer', 'origin', 'authorization', 'proxy-authorization', 'cookie', 'x-ibm-client-id', 'x-ibm-client-secret'],
  ...['access-control-request-method', 'access-control-request-headers', 'content-length'],
  ...['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'via'],
]);

/**
 * The answer `message` makes: its status, its body (an object as JSON) and its fields less the
 * hop-by-hop ones (RFC 9110 §7.6.1) and the request-only ones. `requestCopy` is the header object
 * `message.headers` started as: while it is still that object (no invoke wrote to `message`), a
 * field with the request's own name and value is an echo of the request, not an answer.
 */
export function messageAnswer(
  message: MessageVar,
  requestHeaders: IncomingHttpHeaders,
  requestCopy: Record<string, string> | undefined,
): Answer {
  const status = Number(message.status?.code) || 200;
  let payload: Buffer | string | undefined;
  let contentType: string | undefined;
  const body = message.body;
  if (body instanceof RawBody) payload = body.bytes;
  else if (Buffer.isBuffer(body)) payload = body;
  else if (typeof body === 'string') payload = body;
  else if (body !== undefined && body !== null) {
    payload = JSON.stringify(body);
    contentType = 'application/json';
  }
  const echo = message.headers === requestCopy ? (requestHeaders as Record<string, unknown>) : undefined;
  const headers = new ResponseHeaders();
  const fields = message.headers;
  for (const name of Object.keys(fields)) {
    // A string, or a list of values for a field sent in several lines (http-fields.ts, `Set-Cookie`).
    const value: string | string[] | undefined = fields[name];
    const lower = name.toLowerCase();
    if (hopByHopFields.has(lower) || requestOnly.has(lower) || value === undefined) continue;
    if (echo !== undefined && echo[lower] === value && lower !== 'content-type') continue;
    if (lower === 'content-type' && contentType !== undefined && !/json/i.test(String(value))) continue;
    headers.set(name, value);
  }
  if (contentType !== undefined && !headers.has('content-type')) headers.set('content-type', contentType);
  return { status, payload, headers };
}

/** A CORS preflight (Fetch standard §3.2.2): OPTIONS with `Origin` and `Access-Control-Request-Method`. */
export function isPreflight(req: IncomingMessage): boolean {
  return (
    req.method === 'OPTIONS' &&
    req.headers.origin !== undefined &&
    req.headers['access-control-request-method'] !== undefined
  );
}

/** The 204 answer to a preflight for a path whose operations take `methods`. */
export function preflightAnswer(requestHeaders: IncomingHttpHeaders, methods: readonly string[]): Answer {
  const headers = new ResponseHeaders();
  headers.set('Access-Control-Allow-Methods', methods.join(', '));
  headers.set(
    'Access-Control-Allow-Headers',
    requestHeaders['access-control-request-headers'] ?? 'Content-Type, X-IBM-Client-Id, X-IBM-Client-Secret',
  );
  headers.set('Access-Control-Max-Age', '600');
  headers.set('Access-Control-Allow-Origin', requestHeaders.origin ?? '*');
  return { status: 204, payload: undefined, headers };
}

const exposed =
  'X-Global-Transaction-ID, X-RateLimit-Limit, X-RateLimit-Remaining, RateLimit, RateLimit-Policy, Retry-After';

/** The CORS fields of an answer to `origin` from an API that enables CORS (Fetch standard §3.2.3). */
export function addCorsHeaders(headers: ResponseHeaders, origin: string | undefined): void {
  if (!origin) return;
  headers.set('Access-Control-Allow-Origin', origin);
  headers.set('Access-Control-Expose-Headers', exposed);
  headers.set('Vary', 'Origin');
}

/**
 * The one error writer: any error as API Connect's envelope. A PorticoError and an AssemblyError
 * keep their status and fields; anything else is a 500 that names the transaction (and is logged).
 * `limitHeaders` (the plan's count for this call) go first, so the error's own fields win: an
 * assembly `ratelimit` 429 answers with its own `Retry-After`. A 429 always has one (1 second when
 * the error gives none).
 */
export function errorAnswer(
  error: unknown,
  txId: string,
  logger: Logger,
  limitHeaders?: ReadonlyArray<readonly [string, string]>,
): Answer {
  const headers = new ResponseHeaders();
  if (limitHeaders !== undefined) headers.setAll(limitHeaders);
  let status: number;
  let info: string;
  let errorName: string;
  if (error instanceof PorticoError) {
    status = error.status;
    info = error.message;
    errorName = error.code;
    headers.setAll(Object.entries(error.headers));
  } else if (error instanceof AssemblyError) {
    status = error.status;
    const named = error.policy && !error.message.includes(error.policy);
    info = named ? `${error.message} (policy ${error.policy})` : error.message;
    errorName = error.errorName;
    headers.setAll(Object.entries(error.headers));
    if (errorName === 'JavaScriptError' || status >= 500) logger.warn({ tx: txId, err: error }, 'assembly error');
  } else {
    status = 500;
    info = new PorticoError('GW_INTERNAL', { txId }).message;
    errorName = 'RuntimeError';
    logger.error({ tx: txId, err: error }, 'gateway request failed');
  }
  if (status === 429 && !headers.has('retry-after')) headers.set('Retry-After', '1');
  headers.set('content-type', 'application/json');
  return { status, payload: JSON.stringify(errorEnvelope(status, info)), headers, errorName };
}

/**
 * Whether the consumer closed its connection before its answer was written (nginx logs such a call
 * as 499). The response is destroyed when its connection closes, or the socket already is
 * (its 'close' comes a turn later); once the answer is written, a close is the normal end.
 */
export function consumerGone(res: ServerResponse): boolean {
  return !res.writableEnded && (res.destroyed || res.socket?.destroyed === true);
}

/**
 * What the activity log records for an answer the consumer left before: an error keeps its name and
 * status (it says why the flow ended: `ConsumerClosedError` when the consumer's leaving ended a
 * backend call); any other answer was produced for nobody, and is recorded as 499.
 */
export function unansweredRecord(answer: Answer): Answer {
  if (answer.errorName !== undefined) return answer;
  return { ...answer, status: 499, errorName: ConsumerClosedError.errorName };
}

/**
 * Whether `status` can end an exchange (RFC 9110 §15). A 1xx is interim: written as the answer,
 * the consumer (or a proxy in front that shares the connection among clients) would wait on and
 * take the next answer on the connection as this one's, and after a 101 treat the connection as
 * switched. Node writes any status from 100 to 999.
 */
export function isFinalStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}

/**
 * Writes an answer in one `writeHead` call: `content-length` set anew, no body for HEAD (while the
 * node drains, `Gateway.handle` has already made every answer close its connection). A 204 or 304
 * has neither body nor `content-length` (RFC 9110 §8.6, §15.4.5): a length there would make a
 * recipient that trusts it read the next answer's bytes as this one's body.
 *
 * An answer written before the request's body was read to its end (a 413, or a refusal before the
 * body phase) closes the connection once written (RFC 9112 §9.6; Node ends the socket once the
 * answer is flushed): reading the rest to keep the connection would let a body that never ends
 * hold it, and the gateway's reading, until the request timeout.
 *
 * The status line's reason is always given: after a `writeHead` that threw (a field value an
 * assembly made with characters HTTP refuses), Node keeps the failed attempt's reason for the
 * next attempt, the 500 envelope, whose status line read `500 OK`.
 */
export function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  const { headers, payload } = answer;
  const bodiless = answer.status === 204 || answer.status === 304;
  const length = payload === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const unread = !req.complete;
  if (!bodiless) headers.set('content-length', length);
  if (unread) headers.set('connection', 'close');
  res.writeHead(answer.status, STATUS_CODES[answer.status] ?? 'unknown', headers.fields);
  if (req.method === 'HEAD' || payload === undefined || bodiless) res.end();
  else res.end(payload);
}
