/**
 * The gateway: consumer traffic on `/{org}/{catalog}/{basePath}{path}` (DESIGN §3).
 *
 * Per request, in order: route → parameters → client id/secret → subscription → plan rate
 * limit → assembly → response → activity event. Everything is read from the current
 * snapshot; the database is never touched on this path. A new snapshot is compiled off the
 * path and swapped in whole, so requests in flight finish on the one they started with.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { register as metricsRegistry } from 'prom-client';
import { PorticoError, errorEnvelope } from '../errors.ts';
import type { ErrorCode, ErrorParams } from '../errors.ts';
import { AssemblyError, RawBody } from '../policies/types.ts';
import type { MessageVar, PolicySettings, RequestVar } from '../policies/types.ts';
import { closeDispatchers } from '../policies/invoke.ts';
import { hopByHopFields } from '../policies/http-fields.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { CounterStore, LimitDecision } from '../ratelimit/types.ts';
import { secretMatches } from '../store/secrets.ts';
import type { SnapshotData } from '../store/snapshot-data.ts';
import type { AnalyticsSink } from '../analytics/sink.ts';
import { GatewayContext } from './context.ts';
import type { PolicyRegistry } from './flow.ts';
import { buildActivityEvent, createRedaction } from './activity.ts';
import type { Redaction } from './activity.ts';
import { recordRequest } from './metrics.ts';
import { compileSnapshot, matchRoute, subscriptionFor } from './snapshot.ts';
import type { CompiledApi, CompiledOperation, CredentialInfo, Snapshot, SubscriptionInfo } from './snapshot.ts';

export interface GatewayOptions {
  logger: Logger;
  counters: CounterStore;
  registry: PolicyRegistry;
  policySettings: PolicySettings;
  maxRequestBytes: number;
  loadSnapshotData: () => Promise<SnapshotData>;
  sink?: AnalyticsSink;
  analyticsMaxPayloadBytes?: number;
  /** Header and JSON field names redacted in captured payloads (besides credentials). */
  analyticsRedact?: string[];
}

const txPrefix = randomBytes(4).toString('hex');
let txCounter = 0;

/** A transaction id unique to this process and request, cheap to make. */
function nextTransactionId(): string {
  txCounter = (txCounter + 1) >>> 0;
  return `${txPrefix}${txCounter.toString(16).padStart(8, '0')}`;
}

const bodylessMethods = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);
// `message.headers` starts as the request's headers; fields that only make sense on a request
// (RFC 9110 §10.1, §11.6) and the consumer's credentials never go back out in the response.
const requestOnly = new Set([
  'host', 'user-agent', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'expect', 'from', 'if-match',
  'if-none-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'max-forwards', 'range', 'referer', 'origin',
  'authorization', 'proxy-authorization', 'cookie', 'x-ibm-client-id', 'x-ibm-client-secret', 'access-control-request-method',
  'access-control-request-headers', 'content-length', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', 'via',
]);

/**
 * The response's header fields, gathered for one `res.writeHead(status, fields)` call (Node writes
 * a flat array as it is, without building its header object field by field). A field set again
 * under any case replaces the earlier one in its place, as `res.setHeader` does.
 */
class ResponseHeaders {
  /** name, value, name, value… as writeHead takes them. */
  readonly fields: Array<string | number> = [];
  private readonly lower: string[] = [];

  set(name: string, value: string | number): void {
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

  has(name: string): boolean {
    return this.lower.includes(name.toLowerCase());
  }

  /** As `res.getHeaders()` gives them: lower-case names. */
  toObject(): Record<string, string | number> {
    const out: Record<string, string | number> = {};
    for (let i = 0; i < this.lower.length; i++) out[this.lower[i]] = this.fields[2 * i + 1];
    return out;
  }
}

function jsonHeaders(): ResponseHeaders {
  const headers = new ResponseHeaders();
  headers.set('content-type', 'application/json');
  return headers;
}

class ConsumerError extends Error {
  constructor(
    readonly status: number,
    readonly info: string,
    readonly headers: Array<[string, string]> = [],
    readonly errorName = 'GatewayError',
  ) {
    super(info);
  }
}

function consumerError(code: ErrorCode, params: ErrorParams = {}, headers: Array<[string, string]> = []): ConsumerError {
  const error = new PorticoError(code, params);
  return new ConsumerError(error.status, error.message, headers, code);
}

interface RequestState {
  txId: string;
  started: number;
  api?: CompiledApi;
  operation?: CompiledOperation;
  clientId?: string;
  credential?: CredentialInfo;
  subscription?: SubscriptionInfo;
  limitHeaders?: Array<[string, string]>;
  context?: GatewayContext;
  errorName?: string;
  requestBody?: Buffer;
  /** The copy of the request headers `message.headers` starts as. */
  requestCopy?: Record<string, string>;
}

export class Gateway {
  private snapshot: Snapshot | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  private server: Server | undefined;
  private readonly abort = new AbortController();
  private draining = false;

  private readonly redaction: Redaction;

  constructor(private readonly options: GatewayOptions) {
    this.redaction = createRedaction(options.analyticsRedact);
  }

  get current(): Snapshot | undefined {
    return this.snapshot;
  }

  /**
   * Rebuilds the snapshot from the store and swaps it in. Calls made while a rebuild runs
   * coalesce into one more rebuild after it, so the last change is always seen.
   */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.reloadAgain = false;
          const data = await this.options.loadSnapshotData();
          const next = compileSnapshot(data, {
            registry: this.options.registry,
            settings: this.options.policySettings,
            logger: this.options.logger,
            previous: this.snapshot,
          });
          this.snapshot = next;
          this.options.logger.debug({ change: next.change, apis: next.apiCount, compileMs: Math.round(next.compileMs) }, 'gateway snapshot swapped');
        } while (this.reloadAgain);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** The node:http request listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const state: RequestState = { txId: nextTransactionId(), started: performance.now() };
    // Nothing per request tracks what is in flight: close() waits on the server's connections.
    this.serve(req, res, state).catch((error: unknown) => this.fail(res, state, error));
  };

  private async serve(req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? '' : url.slice(q);
    const second = pathname.indexOf('/', 1);
    // API URLs have at least three segments, so one-segment paths are free for the node's status.
    if (second < 0) return this.answerStatus(pathname, req, res, state);
    const snapshot = this.snapshot;
    if (snapshot === undefined || this.draining) throw consumerError('GW_UNAVAILABLE', { reason: this.draining ? 'shutting down' : 'starting' });
    const third = pathname.indexOf('/', second + 1);
    const catalogKey = third < 0 ? pathname.slice(1) : pathname.slice(1, third);
    const catalog = snapshot.catalogs.get(catalogKey);
    if (catalog === undefined) throw consumerError('GW_NOT_FOUND');
    const path = third < 0 ? '/' : pathname.slice(third);
    const verb = req.method ?? 'GET';

    const match = matchRoute(catalog, verb, path);
    if ('notFound' in match) throw consumerError('GW_NOT_FOUND');
    if ('methodNotAllowed' in match) {
      const preflight = verb === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
      if (preflight) return this.answerPreflight(req, res, match.methodNotAllowed, state);
      throw consumerError('GW_METHOD_NOT_ALLOWED', { method: verb }, [['Allow', match.methodNotAllowed.join(', ')]]);
    }
    const { api, operation } = match;
    state.api = api;
    state.operation = operation;

    const query = search.length > 1 ? new URLSearchParams(search.slice(1)) : undefined;
    const parameters = readParameters(operation, req, query, match.pathParams);
    this.checkCredentials(snapshot, api, operation, req, query, state);
    if (state.subscription && state.subscription.rules.length > 0) await this.enforcePlanLimits(state.subscription, state);

    const body = bodylessMethods.has(verb) && !hasBody(req) ? undefined : await readBody(req, this.options.maxRequestBytes);
    if (operation.bodyRequired && (body === undefined || body.length === 0)) throw consumerError('GW_MISSING_PARAMETER', { name: 'body', in: 'body' });
    state.requestBody = body;
    const context = this.buildContext(req, api, operation, state, parameters, path, search, body);
    state.context = context;
    await api.flow(context);
    this.respond(req, res, state, context.message);
  }

  private checkCredentials(
    snapshot: Snapshot,
    api: CompiledApi,
    operation: CompiledOperation,
    req: IncomingMessage,
    query: URLSearchParams | undefined,
    state: RequestState,
  ): void {
    const security = operation.security;
    if (security === undefined) return;
    const clientId = readCredential(security.clientId, req, query);
    if (clientId === undefined || clientId === '') throw consumerError('GW_UNAUTHORIZED');
    state.clientId = clientId;
    const credential = snapshot.credentials.get(clientId);
    if (credential === undefined) throw consumerError('GW_UNAUTHORIZED');
    if (security.clientSecret) {
      const secret = readCredential(security.clientSecret, req, query);
      if (secret === undefined || !secretMatches(secret, credential.secretHash)) throw consumerError('GW_UNAUTHORIZED');
    }
    state.credential = credential;
    const subscription = subscriptionFor(api, credential.app.id);
    if (subscription === undefined) throw consumerError('GW_NOT_SUBSCRIBED', { clientId, reason: 'no subscription' });
    if (subscription.state !== 'active') throw consumerError('GW_NOT_SUBSCRIBED', { clientId, reason: 'the subscription is pending approval' });
    state.subscription = subscription;
  }

  private async enforcePlanLimits(subscription: SubscriptionInfo, state: RequestState): Promise<void> {
    const counters = this.options.counters;
    // Plan limits are shared by every operation of the plan: one key per subscription.
    const key = `plan:${subscription.id}`;
    const decision: LimitDecision = counters.hitSync ? counters.hitSync(key, subscription.rules) : await counters.hit(key, subscription.rules);
    state.limitHeaders = rateLimitHeaders(decision);
    if (!decision.allowed) throw consumerError('GW_RATE_LIMIT', {}, []);
  }

  private buildContext(
    req: IncomingMessage,
    api: CompiledApi,
    operation: CompiledOperation,
    state: RequestState,
    parameters: Record<string, unknown>,
    path: string,
    search: string,
    body: Buffer | undefined,
  ): GatewayContext {
    const headers = req.headers as Record<string, string>;
    const contentType = headers['content-type'] ?? '';
    const requestBody = body === undefined ? undefined : new RawBody(body, contentType);
    const request: RequestVar = {
      verb: req.method ?? 'GET',
      uri: `http://${headers.host ?? 'localhost'}${req.url ?? '/'}`,
      path,
      search,
      headers,
      parameters,
      body: requestBody,
      'content-type': contentType,
    };
    const message: MessageVar = { headers: { ...headers }, body: requestBody, status: { code: 200, reason: 'OK' } };
    state.requestCopy = message.headers;
    const context = new GatewayContext({
      request,
      message,
      api: { ...api.contextApi, operation: { id: operation.id, path: operation.path } },
      properties: api.properties,
      log: this.options.logger,
      operation: { id: operation.id, path: operation.path, verb: operation.verb },
      signal: this.abort.signal,
      limits: state.subscription?.limits,
    });
    const credential = state.credential;
    const subscription = state.subscription;
    if (credential) {
      context.vars.client = {
        app: { id: credential.app.id, name: credential.app.title, 'lifecycle-state': 'PRODUCTION' },
        org: { id: credential.app.consumerOrgId, name: credential.app.consumerOrgName },
        'client-id': state.clientId,
      };
    }
    if (subscription) {
      context.vars.plan = { id: subscription.planId, name: subscription.planName, version: subscription.planVersion, 'rate-limit': subscription.rateLimitText };
      context.vars.product = { name: subscription.productName, version: subscription.productVersion, title: subscription.productTitle };
    }
    return context;
  }

  private respond(req: IncomingMessage, res: ServerResponse, state: RequestState, message: MessageVar): void {
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
    // While `message.headers` is still the request's own copy (no invoke wrote to `message`),
    // a field with the request's name and value is an echo of the request, not an answer.
    const echo = message.headers === state.requestCopy ? (req.headers as Record<string, unknown>) : undefined;
    const headers = new ResponseHeaders();
    for (const [name, value] of Object.entries(message.headers)) {
      const lower = name.toLowerCase();
      if (hopByHopFields.has(lower) || requestOnly.has(lower) || value === undefined) continue;
      if (echo !== undefined && echo[lower] === value && lower !== 'content-type') continue;
      if (lower === 'content-type' && contentType !== undefined && !/json/i.test(value)) continue;
      headers.set(name, value);
    }
    if (contentType !== undefined && !headers.has('content-type')) headers.set('content-type', contentType);
    this.finish(req, res, state, status, payload, headers);
  }

  /** Common tail of every answer: transaction id, limits, CORS, the body, the activity event. */
  private finish(req: IncomingMessage, res: ServerResponse, state: RequestState, status: number, payload: Buffer | string | undefined, headers = new ResponseHeaders()): void {
    headers.set('X-Global-Transaction-ID', state.txId);
    if (state.limitHeaders) for (const [name, value] of state.limitHeaders) headers.set(name, value);
    if (state.api?.definition.cors.enabled && req.headers.origin) {
      headers.set('Access-Control-Allow-Origin', req.headers.origin);
      headers.set('Access-Control-Expose-Headers', 'X-Global-Transaction-ID, X-RateLimit-Limit, X-RateLimit-Remaining, RateLimit, RateLimit-Policy, Retry-After');
      headers.set('Vary', 'Origin');
    }
    const length = payload === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    headers.set('content-length', length);
    // One call writes the head: no per-field setHeader bookkeeping.
    res.writeHead(status, headers.fields);
    if (req.method === 'HEAD' || payload === undefined) res.end();
    else res.end(payload);
    this.record(req, state, status, payload, headers);
  }

  private record(req: IncomingMessage, state: RequestState, status: number, payload: Buffer | string | undefined, headers: ResponseHeaders): void {
    const apiName = state.api?.name ?? '';
    const seconds = (performance.now() - state.started) / 1000;
    recordRequest(apiName, status, seconds);
    const sink = this.options.sink;
    if (sink === undefined || state.api === undefined) return;
    const event = buildActivityEvent({
      req,
      responseHeaders: () => headers.toObject(),
      status,
      txId: state.txId,
      latencyMs: seconds * 1000,
      api: state.api,
      operation: state.operation,
      clientId: state.clientId,
      credential: state.credential,
      subscription: state.subscription,
      backendMs: state.context?.backendMs ?? 0,
      errorName: state.errorName,
      requestBody: state.requestBody,
      responseBody: payload,
      maxPayloadBytes: this.options.analyticsMaxPayloadBytes ?? 65_536,
      redaction: this.redaction,
    });
    if (event) sink.record(event);
  }

  /**
   * `/health` (the process answers), `/ready` (a snapshot is loaded and the node is not
   * draining: what a load balancer should check) and `/metrics` (Prometheus) on the gateway
   * port, so a gateway-only node can be watched without a management port.
   */
  private async answerStatus(pathname: string, req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<void> {
    if (pathname === '/health') {
      return this.finish(req, res, state, 200, '{"status":"ok"}', jsonHeaders());
    }
    if (pathname === '/ready') {
      const snapshot = this.snapshot;
      const ready = snapshot !== undefined && !this.draining;
      const body = {
        status: ready ? 'ready' : 'not ready',
        draining: this.draining,
        change: snapshot?.change ?? null,
        apis: snapshot?.apiCount ?? 0,
        ...this.health(),
      };
      return this.finish(req, res, state, ready ? 200 : 503, JSON.stringify(body), jsonHeaders());
    }
    if (pathname === '/metrics') {
      const headers = new ResponseHeaders();
      headers.set('content-type', metricsRegistry.contentType);
      return this.finish(req, res, state, 200, await metricsRegistry.metrics(), headers);
    }
    throw consumerError('GW_NOT_FOUND');
  }

  /** Extra readiness facts from whoever runs the gateway (e.g. whether the store answers). */
  health: () => Record<string, unknown> = () => ({});

  private answerPreflight(req: IncomingMessage, res: ServerResponse, methods: string[], state: RequestState): void {
    const headers = new ResponseHeaders();
    headers.set('Access-Control-Allow-Methods', methods.join(', '));
    headers.set('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'Content-Type, X-IBM-Client-Id, X-IBM-Client-Secret');
    headers.set('Access-Control-Max-Age', '600');
    headers.set('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    this.finish(req, res, state, 204, undefined, headers);
  }

  /** Writes an error envelope for anything that went wrong. */
  private fail(res: ServerResponse, state: RequestState, error: unknown): void {
    const req = res.req;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let status: number;
    let info: string;
    let headers: Array<[string, string]> = [];
    if (error instanceof ConsumerError) {
      status = error.status;
      info = error.info;
      headers = error.headers;
      state.errorName = error.errorName;
    } else if (error instanceof AssemblyError) {
      status = error.status;
      info = error.policy && !error.message.includes(error.policy) ? `${error.message} (policy ${error.policy})` : error.message;
      headers = Object.entries(error.headers);
      state.errorName = error.errorName;
      if (error.errorName === 'JavaScriptError' || status >= 500) this.options.logger.warn({ tx: state.txId, err: error }, 'assembly error');
    } else {
      status = 500;
      info = new PorticoError('GW_INTERNAL', { txId: state.txId }).message;
      state.errorName = 'RuntimeError';
      this.options.logger.error({ tx: state.txId, err: error }, 'gateway request failed');
    }
    if (status === 429) {
      const retry = state.limitHeaders?.find(([name]) => name.toLowerCase() === 'retry-after');
      if (!retry) headers.push(['Retry-After', '1']);
    }
    const fields = new ResponseHeaders();
    for (const [name, value] of headers) fields.set(name, value);
    fields.set('content-type', 'application/json');
    this.finish(req, res, state, status, JSON.stringify(errorEnvelope(status, info)), fields);
  }

  /** Starts listening; resolves once bound. */
  listen(port: number, host: string): Promise<Server> {
    const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 120_000 }, this.handle);
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then releases everything. */
  async close(graceMs = 10_000): Promise<void> {
    this.draining = true;
    const server = this.server;
    if (server) {
      let ended = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve())).then(() => {
        ended = true;
      });
      // Until every answer has been handled and written out (a connection still writing one is
      // not idle), close the connections that fall idle; past the grace, cut the rest.
      const deadline = Date.now() + graceMs;
      while (!ended && Date.now() < deadline) {
        server.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 20));
      }
      this.abort.abort();
      server.closeAllConnections();
      await closed;
    }
    await this.options.sink?.close();
    await this.options.counters.close();
    await closeDispatchers();
    await this.options.policySettings.script.pool?.close();
  }

  /** Prometheus text of the gateway's metrics (shared default registry). */
  static metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Reads the request body up to `limit` bytes; larger → 413 before the assembly runs. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(consumerError('GW_PAYLOAD_TOO_LARGE', { limit }));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(consumerError('GW_PAYLOAD_TOO_LARGE', { limit }));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

function readCredential(where: { in: 'header' | 'query'; name: string }, req: IncomingMessage, query: URLSearchParams | undefined): string | undefined {
  if (where.in === 'header') {
    const value = req.headers[where.name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  }
  return query?.get(where.name) ?? undefined;
}

/** Reads and converts the operation's parameters; a missing or invalid one is a 400. */
function readParameters(
  operation: CompiledOperation,
  req: IncomingMessage,
  query: URLSearchParams | undefined,
  pathParams: Record<string, string>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const parameter of operation.parameters) {
    let raw: string | undefined;
    if (parameter.in === 'query') raw = query?.get(parameter.name) ?? undefined;
    else if (parameter.in === 'path') raw = pathParams[parameter.name];
    else if (parameter.in === 'header') {
      const value = req.headers[parameter.name.toLowerCase()];
      raw = Array.isArray(value) ? value[0] : value;
    } else continue;
    if (raw === undefined) {
      if (parameter.required) throw consumerError('GW_MISSING_PARAMETER', { name: parameter.name, in: parameter.in });
      if (parameter.defaultValue !== undefined) values[parameter.name] = parameter.defaultValue;
      continue;
    }
    try {
      values[parameter.name] = parameter.convert(raw);
    } catch (error) {
      throw consumerError('GW_INVALID_PARAMETER', { name: parameter.name, in: parameter.in, reason: (error as Error).message });
    }
  }
  return values;
}
