/**
 * What one call through the gateway is: its transaction id, the record the response and the
 * activity event are written from, the framing check made before anything else, and the
 * assembly's context (`request.*`, `message.*`, `api.*`, `client.*`, `plan.*`, `product.*`) built
 * from what the earlier phases returned.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PorticoError } from '../errors.ts';
import { dropConnectionOptions } from '../policies/http-fields.ts';
import { RawBody } from '../policies/types.ts';
import type { MessageVar, RequestVar } from '../policies/types.ts';
import { GatewayContext, headerBag } from './context.ts';
import { setForwardedHeaders } from './forwarded.ts';
import type { LimitHeaders } from './plan-limits.ts';
import type { RouteMatch } from './router.ts';
import type { Caller } from './security/index.ts';
import type { CompiledApi, CompiledOperation } from './snapshot.ts';

const txPrefix = randomBytes(4).toString('hex');
let txCounter = 0;

/** A transaction id unique to this process and request, cheap to make. */
export function nextTransactionId(): string {
  txCounter = (txCounter + 1) >>> 0;
  return `${txPrefix}${txCounter.toString(16).padStart(8, '0')}`;
}

/**
 * One call, as far as the phases got: written by the server from what each phase returns, read
 * by the response (rate-limit fields, CORS) and the activity event.
 */
export interface Transaction {
  txId: string;
  started: number;
  api?: CompiledApi;
  operation?: CompiledOperation;
  caller?: Caller;
  /** The client id a refused caller presented (from the security phase's error). */
  refusedClientId?: string;
  limitHeaders?: LimitHeaders;
  requestBody?: Buffer;
  context?: GatewayContext;
}

export function newTransaction(): Transaction {
  return { txId: nextTransactionId(), started: performance.now() };
}

/**
 * A header that makes the request ambiguous: RFC 9112 §3.2 requires a 400 for more than one
 * `Host` line (Node keeps the first, a backend or proxy behind may read another). Node's parser
 * already refuses a repeated `Content-Length`, one beside `Transfer-Encoding`, and a coding after
 * `chunked`; it accepts codings before it (`gzip, chunked`) and passes the body on still coded
 * with no field left to say so, so any `Transfer-Encoding` but `chunked` is refused (RFC 9112 §6.1
 * lets a server answer a coding it does not understand with an error).
 */
export function refusedHeader(req: IncomingMessage): PorticoError | undefined {
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined && coding.toLowerCase() !== 'chunked') {
    const reason = 'only chunked is accepted';
    return new PorticoError('GW_BAD_HEADER', { name: 'Transfer-Encoding', reason });
  }
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++;
  }
  return hosts > 1
    ? new PorticoError('GW_BAD_HEADER', { name: 'Host', reason: 'it is sent more than once' })
    : undefined;
}

/** What the context takes from the gateway rather than from the request. */
export interface ContextDeps {
  logger: Logger;
  /** Aborted when the gateway stops past its grace: backend calls end. */
  signal: AbortSignal;
  /** Peers whose `X-Forwarded-*` headers are kept (forwarded.ts). */
  trusted: (address: string) => boolean;
}

/** The request as the phases left it: routed, its caller known, parameters read, body read. */
export interface ReadRequest {
  route: RouteMatch & { path: string };
  caller: Caller;
  parameters: Record<string, unknown>;
  search: string;
  body: Buffer | undefined;
}

/**
 * Builds the assembly's context. The request's headers are settled first: the fields its
 * `Connection` names dropped, then `X-Forwarded-*` set. `res` tells the context when the consumer
 * goes away (nothing listens to it until a policy waits on a backend).
 */
export function requestContext(
  req: IncomingMessage,
  res: ServerResponse,
  read: ReadRequest,
  deps: ContextDeps,
): GatewayContext {
  dropConnectionOptions(req.headers);
  setForwardedHeaders(req, deps.trusted);
  const { api, operation } = read.route;
  const headers = req.headers as Record<string, string>;
  const contentType = headers['content-type'] ?? '';
  const requestBody = read.body === undefined ? undefined : new RawBody(read.body, contentType);
  const request: RequestVar = {
    verb: req.method ?? 'GET',
    uri: `http://${headers.host ?? 'localhost'}${req.url ?? '/'}`,
    path: read.route.path,
    search: read.search,
    headers,
    parameters: read.parameters,
    body: requestBody,
    'content-type': contentType,
  };
  const message: MessageVar = { headers: headerBag(headers), body: requestBody, status: { code: 200, reason: 'OK' } };
  const { credential, subscription, user } = read.caller;
  const context = new GatewayContext({
    request,
    message,
    api: operation.contextApi,
    properties: api.properties,
    log: deps.logger,
    operation,
    signal: deps.signal,
    response: res,
    limits: subscription?.limits,
  });
  if (credential) {
    context.vars.client = {
      app: { id: credential.app.id, name: credential.app.title, 'lifecycle-state': 'PRODUCTION' },
      org: { id: credential.app.consumerOrgId, name: credential.app.consumerOrgName },
      'client-id': read.caller.clientId,
    };
  }
  // API Connect documents no context variable for a basic-authenticated user; Portico's name.
  if (user !== undefined) request['authenticated-credential'] = user;
  if (subscription) {
    const { planId, planName, planVersion, rateLimitText } = subscription;
    context.vars.plan = { id: planId, name: planName, version: planVersion, 'rate-limit': rateLimitText };
    const { productName, productVersion, productTitle } = subscription;
    context.vars.product = { name: productName, version: productVersion, title: productTitle };
  }
  return context;
}
