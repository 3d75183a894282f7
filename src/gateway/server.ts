/**
 * The gateway: consumer traffic on `/{org}/{catalog}/{basePath}{path}` (DESIGN §3).
 *
 * Per request, in order: route → security (client id/secret, subscription) → parameters → plan
 * rate limit → assembly → response → activity event. Everything is read from the current
 * snapshot; the database is never touched on this path. A new snapshot is compiled off the
 * path and swapped in whole, so requests in flight finish on the one they started with.
 */
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { register as metricsRegistry } from 'prom-client';
import { PorticoError, errorEnvelope } from '../errors.ts';
import type { ErrorCode, ErrorParams } from '../errors.ts';
import { AssemblyError, RawBody } from '../policies/types.ts';
import type { MessageVar, PolicySettings, RequestVar } from '../policies/types.ts';
import { closeDispatchers } from '../policies/invoke/index.ts';
import { hopByHopFields } from '../policies/http-fields.ts';
import { pathValueProblem } from '../policies/url-template.ts';
import { rateLimitHeaders } from '../ratelimit/headers.ts';
import type { CounterStore, LimitDecision } from '../ratelimit/types.ts';
import type { SnapshotData } from '../store/snapshot-data.ts';
import type { AnalyticsSink } from '../analytics/sink.ts';
import { GatewayContext, headerBag } from './context.ts';
import type { PolicyRegistry } from './flow.ts';
import { buildActivityEvent, createRedaction } from './activity.ts';
import type { Redaction } from './activity.ts';
import { setForwardedHeaders, trustedPeers } from './forwarded.ts';
import { recordRequest } from './metrics.ts';
import { authenticate } from './security/index.ts';
import type { Caller, CallerDirectory, SecurityRequest } from './security/index.ts';
import { compileSnapshot, matchRoute, subscriptionFor } from './snapshot.ts';
import type { OAuthEndpoints } from '../oauth/endpoints.ts';
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
  /** Consumer connections: timeouts, the cap on open ones, and the stop's drain. */
  connections?: Partial<ConnectionSettings>;
  /** Peers (addresses, CIDR blocks) whose forwarded headers are kept; default none. */
  trustedProxies?: string[];
  /** Also answer `/health`, `/ready` and `/metrics` on the consumer port. */
  statusOnConsumerPort?: boolean;
  /** The native OAuth providers' endpoints (token, authorize, …), answered before API routing. */
  oauth?: OAuthEndpoints;
}

export interface ConnectionSettings {
  /** A request head, and a new connection's first request, must arrive within this long. */
  headersTimeoutMs: number;
  /** A whole request (head and body) must arrive within this long. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** Open consumer connections at once; more are closed on arrival (0 = no cap). */
  maxConnections: number;
  /** How long a stop answers `/ready` 503 while still serving, before the listener closes. */
  drainMs: number;
}

const defaultConnections: ConnectionSettings = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  drainMs: 0,
};

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
  'host',
  'user-agent',
  'accept',
  'accept-encoding',
  'accept-language',
  'accept-charset',
  'expect',
  'from',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
  'max-forwards',
  'range',
  'referer',
  'origin',
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-ibm-client-id',
  'x-ibm-client-secret',
  'access-control-request-method',
  'access-control-request-headers',
  'content-length',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'forwarded',
  'via',
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

function admit(caller: Caller, state: RequestState): void {
  state.clientId = caller.clientId;
  state.credential = caller.credential;
  state.subscription = caller.subscription;
  state.scopes = caller.scopes;
  state.user = caller.user;
}

/**
 * The user to record: a user-security policy may authenticate after the security phase, so the
 * context's `request.authenticated-credential` (the one place both write) is read first.
 */
function authenticatedUser(state: RequestState): string | undefined {
  const name = state.context?.request['authenticated-credential'];
  return typeof name === 'string' ? name : state.user;
}

/**
 * The security phase's coded error as the consumer's answer, with the `WWW-Authenticate`
 * challenge of the scheme the caller could satisfy (basic: RFC 7617, bearer: RFC 6750).
 */
function refuse(error: unknown, state: RequestState): never {
  if (!(error instanceof PorticoError)) throw error;
  state.clientId = error.params.clientId as string | undefined;
  const challenge = error.params.challenge;
  const headers: Array<[string, string]> = challenge === undefined ? [] : [['www-authenticate', String(challenge)]];
  throw new ConsumerError(error.status, error.message, headers, error.code);
}

function consumerError(
  code: ErrorCode,
  params: ErrorParams = {},
  headers: Array<[string, string]> = [],
): ConsumerError {
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
  /** The user a basic scheme authenticated. */
  user?: string;
  /** Scopes granted to the caller's bearer token. */
  scopes?: readonly string[];
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
  private statusServer: Server | undefined;
  private readonly abort = new AbortController();
  private draining = false;

  private readonly redaction: Redaction;
  private readonly connections: ConnectionSettings;
  private readonly trusted: (address: string) => boolean;

  constructor(private readonly options: GatewayOptions) {
    this.redaction = createRedaction(options.analyticsRedact);
    this.connections = { ...defaultConnections, ...options.connections };
    this.trusted = trustedPeers(options.trustedProxies ?? []);
    // Every backend call in flight listens on this one signal (undici removes its listener when the
    // call ends): more than ten at once is the normal case, not a leak.
    setMaxListeners(0, this.abort.signal);
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
          this.options.logger.debug(
            { change: next.change, apis: next.apiCount, compileMs: Math.round(next.compileMs) },
            'gateway snapshot swapped',
          );
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
    // The first request of a connection ends its wait for one (see `listen`); a slow backend must not.
    if (req.socket.timeout) req.socket.setTimeout(0);
    const refused = refusedHeader(req);
    if (refused !== undefined) return this.fail(res, state, refused);
    // Nothing per request tracks what is in flight: close() waits on the server's connections.
    this.serve(req, res, state).catch((error: unknown) => this.fail(res, state, error));
  };

  /** The status listener's request listener: `/health`, `/ready`, `/metrics`, else 404. */
  readonly handleStatus = (req: IncomingMessage, res: ServerResponse): void => {
    const state: RequestState = { txId: nextTransactionId(), started: performance.now() };
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.answerStatusPath(q < 0 ? url : url.slice(0, q), req, res, state).catch((error: unknown) =>
      this.fail(res, state, error),
    );
  };

  private async serve(req: IncomingMessage, res: ServerResponse, state: RequestState): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? '' : url.slice(q);
    // Before routing: servers behind the gateway read `\` as `/` and resolve `%2e%2e`.
    const unsafePath = pathValueProblem(pathname);
    if (unsafePath !== undefined) throw consumerError('GW_INVALID_PATH', { reason: unsafePath });
    const second = pathname.indexOf('/', 1);
    // API URLs have at least three segments, so one-segment paths are free for the node's status.
    if (second < 0) return this.answerStatus(pathname, req, res, state);
    const snapshot = this.snapshot;
    // A draining node still serves: its answers close their connections (see `finish`).
    if (snapshot === undefined) throw consumerError('GW_UNAVAILABLE', { reason: 'starting' });
    const oauthRoute = this.options.oauth?.route(snapshot, pathname);
    if (oauthRoute !== undefined) return this.options.oauth!.serve(oauthRoute, req, res, snapshot, search);
    const third = pathname.indexOf('/', second + 1);
    const catalogKey = third < 0 ? pathname.slice(1) : pathname.slice(1, third);
    const catalog = snapshot.catalogs.get(catalogKey);
    if (catalog === undefined) throw consumerError('GW_NOT_FOUND');
    const path = third < 0 ? '/' : pathname.slice(third);
    const verb = req.method ?? 'GET';

    const match = matchRoute(catalog, verb, path);
    if ('notFound' in match) throw consumerError('GW_NOT_FOUND');
    if ('methodNotAllowed' in match) {
      const preflight =
        verb === 'OPTIONS' &&
        req.headers.origin !== undefined &&
        req.headers['access-control-request-method'] !== undefined;
      if (preflight) return this.answerPreflight(req, res, match.methodNotAllowed, state);
      throw consumerError('GW_METHOD_NOT_ALLOWED', { method: verb }, [['Allow', match.methodNotAllowed.join(', ')]]);
    }
    const { api, operation } = match;
    state.api = api;
    state.operation = operation;

    const query = search.length > 1 ? new URLSearchParams(search.slice(1)) : undefined;
    const identified = this.identify(snapshot, api, operation, { headers: req.headers, query }, state);
    if (identified !== undefined) await identified;
    const parameters = readParameters(operation, req, query, match.pathParams);
    if (state.subscription && state.subscription.rules.length > 0)
      await this.enforcePlanLimits(state.subscription, state);

    const body =
      bodylessMethods.has(verb) && !hasBody(req) ? undefined : await readBody(req, this.options.maxRequestBytes);
    if (operation.bodyRequired && (body === undefined || body.length === 0))
      throw consumerError('GW_MISSING_PARAMETER', { name: 'body', in: 'body' });
    state.requestBody = body;
    const context = this.buildContext(req, api, operation, state, parameters, path, search, body);
    state.context = context;
    await api.flow(context);
    this.respond(req, res, state, context.message);
  }

  /**
   * The security phase, right after routing: an unauthenticated caller must not learn the
   * parameter rules from 400s. Everything comes from the snapshot.
   */
  private identify(
    snapshot: Snapshot,
    api: CompiledApi,
    operation: CompiledOperation,
    request: SecurityRequest,
    state: RequestState,
  ): Promise<void> | undefined {
    const directory: CallerDirectory = {
      credentials: snapshot.credentials,
      subscriptionFor: (appId) => subscriptionFor(api, appId),
      revoked: snapshot.revoked,
    };
    try {
      const caller = authenticate(operation.security, request, directory);
      // Only an operation whose security asks another server (a user registry, introspection) waits.
      if (caller instanceof Promise)
        return caller.then(
          (found) => admit(found, state),
          (error) => refuse(error, state),
        );
      admit(caller, state);
    } catch (error) {
      refuse(error, state);
    }
    return undefined;
  }

  private async enforcePlanLimits(subscription: SubscriptionInfo, state: RequestState): Promise<void> {
    const counters = this.options.counters;
    // Plan limits are shared by every operation of the plan: one key per subscription.
    const key = `plan:${subscription.id}`;
    const decision: LimitDecision = counters.hitSync
      ? counters.hitSync(key, subscription.rules)
      : await counters.hit(key, subscription.rules);
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
    setForwardedHeaders(req, this.trusted);
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
    const message: MessageVar = {
      headers: headerBag(headers),
      body: requestBody,
      status: { code: 200, reason: 'OK' },
    };
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
    // API Connect documents no context variable for a basic-authenticated user; Portico's name.
    if (state.user !== undefined) request['authenticated-credential'] = state.user;
    if (subscription) {
      context.vars.plan = {
        id: subscription.planId,
        name: subscription.planName,
        version: subscription.planVersion,
        'rate-limit': subscription.rateLimitText,
      };
      context.vars.product = {
        name: subscription.productName,
        version: subscription.productVersion,
        title: subscription.productTitle,
      };
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
  private finish(
    req: IncomingMessage,
    res: ServerResponse,
    state: RequestState,
    status: number,
    payload: Buffer | string | undefined,
    headers = new ResponseHeaders(),
  ): void {
    headers.set('X-Global-Transaction-ID', state.txId);
    if (state.limitHeaders) for (const [name, value] of state.limitHeaders) headers.set(name, value);
    if (state.api?.definition.cors.enabled && req.headers.origin) {
      headers.set('Access-Control-Allow-Origin', req.headers.origin);
      headers.set(
        'Access-Control-Expose-Headers',
        'X-Global-Transaction-ID, X-RateLimit-Limit, X-RateLimit-Remaining, RateLimit, RateLimit-Policy, Retry-After',
      );
      headers.set('Vary', 'Origin');
    }
    const length =
      payload === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    headers.set('content-length', length);
    // While draining, each answer ends its connection, so clients reconnect (elsewhere) with no reset.
    if (this.draining) headers.set('connection', 'close');
    // One call writes the head: no per-field setHeader bookkeeping.
    res.writeHead(status, headers.fields);
    if (req.method === 'HEAD' || payload === undefined) res.end();
    else res.end(payload);
    this.record(req, state, status, payload, headers);
  }

  private record(
    req: IncomingMessage,
    state: RequestState,
    status: number,
    payload: Buffer | string | undefined,
    headers: ResponseHeaders,
  ): void {
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
      user: authenticatedUser(state),
      backendMs: state.context?.backendMs ?? 0,
      errorName: state.errorName,
      requestBody: state.requestBody,
      responseBody: payload,
      maxPayloadBytes: this.options.analyticsMaxPayloadBytes ?? 65_536,
      redaction: this.redaction,
    });
    if (event) sink.record(event);
  }

  /** The status paths on the consumer port: 404 unless the settings keep them there. */
  private async answerStatus(
    pathname: string,
    req: IncomingMessage,
    res: ServerResponse,
    state: RequestState,
  ): Promise<void> {
    if (!this.options.statusOnConsumerPort) throw consumerError('GW_NOT_FOUND');
    return this.answerStatusPath(pathname, req, res, state);
  }

  /**
   * `/health` (the process answers), `/ready` (a snapshot is loaded and the node is not
   * draining: what a load balancer should check) and `/metrics` (Prometheus), on the status
   * listener, so a gateway-only node can be watched without a management port, and consumers
   * can read neither.
   */
  private async answerStatusPath(
    pathname: string,
    req: IncomingMessage,
    res: ServerResponse,
    state: RequestState,
  ): Promise<void> {
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
        // Published APIs this node does not serve because they do not compile here (still ready: the rest is served).
        failures: snapshot?.failures ?? [],
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
    headers.set(
      'Access-Control-Allow-Headers',
      req.headers['access-control-request-headers'] ?? 'Content-Type, X-IBM-Client-Id, X-IBM-Client-Secret',
    );
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
      info =
        error.policy && !error.message.includes(error.policy)
          ? `${error.message} (policy ${error.policy})`
          : error.message;
      headers = Object.entries(error.headers);
      state.errorName = error.errorName;
      if (error.errorName === 'JavaScriptError' || status >= 500)
        this.options.logger.warn({ tx: state.txId, err: error }, 'assembly error');
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

  /** Starts the consumer listener; resolves once bound. */
  listen(port: number, host: string): Promise<Server> {
    const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = this.connections;
    const server = createServer(
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        keepAliveTimeout: keepAliveTimeoutMs,
        // Node checks the two timeouts above on this interval (default 30 s): keep it well under them.
        connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeoutMs / 4)),
      },
      this.handle,
    );
    if (maxConnections > 0) server.maxConnections = maxConnections;
    // Node's header timeout starts with a request's first byte: a connection that never sends one
    // would stay open for good. It gets the same time for its first request (reset in `handle`).
    server.on('connection', (socket: Socket) => socket.setTimeout(headersTimeoutMs));
    server.on('clientError', closeOnClientError);
    this.server = server;
    return bind(server, port, host);
  }

  /** Starts the status listener (`/health`, `/ready`, `/metrics`); resolves once bound. */
  listenStatus(port: number, host: string): Promise<Server> {
    const server = createServer({ headersTimeout: 10_000, requestTimeout: 10_000 }, this.handleStatus);
    this.statusServer = server;
    return bind(server, port, host);
  }

  /**
   * Drains and stops: `/ready` answers 503 for the drain period while consumer traffic is still
   * served (each answer closing its connection), then the consumer listener closes, requests in
   * flight finish (up to `graceMs`), and everything is released; the status listener goes last.
   */
  async close(graceMs = 10_000): Promise<void> {
    this.draining = true;
    const server = this.server;
    if (server) {
      if (this.connections.drainMs > 0) await new Promise((r) => setTimeout(r, this.connections.drainMs));
      await this.stopServing(server, graceMs);
    }
    const status = this.statusServer;
    if (status) {
      status.closeAllConnections();
      await new Promise<void>((resolve) => status.close(() => resolve()));
    }
    await this.options.sink?.close();
    await this.options.counters.close();
    await closeDispatchers();
    await this.options.policySettings.script.pool?.close();
  }

  private async stopServing(server: Server, graceMs: number): Promise<void> {
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

  /** Prometheus text of the gateway's metrics (shared default registry). */
  static metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}

const clientErrorAnswers: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
};

/**
 * Answers a malformed or timed-out request as Node would, and always closes the connection: with
 * Node's own handling, some connections answered 408 by the header timeout were left open.
 */
function closeOnClientError(error: Error & { code?: string }, socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writable && socket.bytesWritten === 0) {
    socket.write(clientErrorAnswers[error.code ?? ''] ?? 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  }
  socket.destroy();
}

function bind(server: Server, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * A header whose repetition makes the request ambiguous: RFC 9112 §3.2 requires a 400 for more
 * than one `Host` line (Node keeps the first, a backend or proxy behind may read another).
 * Node's parser already refuses a repeated `Content-Length` and one beside `Transfer-Encoding`.
 */
function refusedHeader(req: IncomingMessage): ConsumerError | undefined {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++;
  }
  return hosts > 1 ? consumerError('GW_BAD_HEADER', { name: 'Host', reason: 'it is sent more than once' }) : undefined;
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
      throw consumerError('GW_INVALID_PARAMETER', {
        name: parameter.name,
        in: parameter.in,
        reason: (error as Error).message,
      });
    }
  }
  return values;
}
