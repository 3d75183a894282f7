/**
 * The gateway: consumer traffic on `/{org}/{catalog}/{basePath}{path}` (DESIGN §3).
 *
 * {@link Gateway.serve} runs the request phases in order, each a module with its own input and
 * output: route (router.ts) → security (security/) → parameters (parameters.ts) → plan limits
 * (plan-limits.ts) → request body (request-body.ts) → assembly (flow.ts, over request-context.ts)
 * → response (response.ts) → activity event (activity.ts). This file composes them and owns the
 * snapshot and the sockets (connections.ts, status.ts). Everything is read from the current
 * snapshot; the database is never touched on this path. A new snapshot is compiled off the path
 * and swapped in whole, so requests in flight finish on the one they started with.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { PorticoError } from '../errors.ts';
import type { MessageVar, PolicySettings } from '../policies/types.ts';
import { closeDispatchers } from '../policies/invoke/dispatchers.ts';
import type { CounterStore } from '../ratelimit/types.ts';
import type { ReloadBase, SnapshotData } from '../store/snapshot-data.ts';
import type { AnalyticsSink } from '../analytics/sink.ts';
import type { OAuthEndpoints } from '../oauth/endpoints.ts';
import type { PolicyRegistry } from './flow.ts';
import { buildActivityEvent, createRedaction } from './activity.ts';
import type { Redaction } from './activity.ts';
import { bind, closeNow, consumerServer, defaultConnections, drain, statusServer } from './connections.ts';
import type { ConnectionSettings } from './connections.ts';
import { trustedPeers } from './forwarded.ts';
import { recordRequest } from './metrics.ts';
import { readParameters } from './parameters.ts';
import { enforcePlanLimits } from './plan-limits.ts';
import { readRequestBody } from './request-body.ts';
import { newTransaction, refusedHeader, requestContext } from './request-context.ts';
import type { ContextDeps, Transaction } from './request-context.ts';
import {
  addCorsHeaders,
  consumerGone,
  errorAnswer,
  isFinalStatus,
  isPreflight,
  messageAnswer,
  preflightAnswer,
  unansweredRecord,
  writeAnswer,
} from './response.ts';
import type { Answer } from './response.ts';
import { isStatusPath, requestTarget, routeRequest } from './router.ts';
import { authenticate, callerDirectory } from './security/index.ts';
import { compileSnapshot, DocumentsNotRead } from './snapshot.ts';
import type { Snapshot } from './snapshot.ts';
import { statusAnswer } from './status.ts';
import type { NodeState } from './status.ts';
import { TimeSlices } from '../time-slices.ts';

/**
 * How long a reload's reads and compile run before the requests waiting get a turn (issue 18: at
 * 1 000 APIs a publish's reload held the event loop for 15–45 ms in one piece).
 */
const reloadSliceMs = 1;

export type { ConnectionSettings } from './connections.ts';

export interface GatewayOptions {
  logger: Logger;
  counters: CounterStore;
  registry: PolicyRegistry;
  policySettings: PolicySettings;
  maxRequestBytes: number;
  /**
   * Reads the store; given the current snapshot's base, only what changed since (see
   * snapshot-data.ts), giving the event loop a turn between reads when `slices` says so.
   */
  loadSnapshotData: (base?: ReloadBase, slices?: TimeSlices) => Promise<SnapshotData>;
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
  private readonly contextDeps: ContextDeps;

  constructor(private readonly options: GatewayOptions) {
    this.redaction = createRedaction(options.analyticsRedact);
    this.connections = { ...defaultConnections, ...options.connections };
    const trusted = trustedPeers(options.trustedProxies ?? []);
    this.contextDeps = { logger: options.logger, signal: this.abort.signal, trusted };
    // Every backend call in flight listens on this one signal (invoke's exchange removes its listener
    // when the call ends): more than ten at once is the normal case, not a leak.
    setMaxListeners(0, this.abort.signal);
  }

  get current(): Snapshot | undefined {
    return this.snapshot;
  }

  /** Extra readiness facts from whoever runs the gateway (e.g. whether the store answers). */
  health: () => Record<string, unknown> = () => ({});

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
          const next = await this.rebuild(new TimeSlices(reloadSliceMs));
          this.snapshot = next;
          const facts = { change: next.change, apis: next.apiCount, compileMs: Math.round(next.compileMs) };
          this.options.logger.debug(facts, 'gateway snapshot swapped');
        } while (this.reloadAgain);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Reads and compiles the next snapshot; with every API document when the compile needs one not read. */
  private async rebuild(slices: TimeSlices): Promise<Snapshot> {
    const { registry, policySettings: settings, logger } = this.options;
    const previous = this.snapshot;
    const compile = (data: SnapshotData) => compileSnapshot(data, { registry, settings, logger, previous, slices });
    try {
      return await compile(await this.options.loadSnapshotData(previous?.base, slices));
    } catch (error) {
      if (!(error instanceof DocumentsNotRead) || previous?.base === undefined) throw error;
      logger.debug({ apis: error.apiIds.length }, 'reload reads every API document: the compile needs some not read');
      return compile(await this.options.loadSnapshotData({ ...previous.base, compiled: undefined }, slices));
    }
  }

  /** The node:http request listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const tx = newTransaction();
    // A draining node still serves, and every answer it writes — the gateway's, the OAuth
    // provider's, the status paths' — closes its connection: clients reconnect elsewhere, no reset.
    if (this.draining) res.shouldKeepAlive = false;
    // The first request of a connection ends its wait for one (see connections.ts); a slow backend must not.
    if (req.socket.timeout) req.socket.setTimeout(0);
    const refused = refusedHeader(req);
    if (refused !== undefined) return this.fail(res, tx, refused);
    // Nothing per request tracks what is in flight: close() waits on the server's connections.
    this.serve(req, res, tx).catch((error: unknown) => this.fail(res, tx, error));
  };

  /** The status listener's request listener: `/health`, `/ready`, `/metrics`, else 404. */
  readonly handleStatus = (req: IncomingMessage, res: ServerResponse): void => {
    const tx = newTransaction();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.answerStatus(req, res, tx, q < 0 ? url : url.slice(0, q)).catch((error: unknown) => this.fail(res, tx, error));
  };

  /** The request phases, in order; each throws its coded error, which {@link fail} answers. */
  private async serve(req: IncomingMessage, res: ServerResponse, tx: Transaction): Promise<void> {
    const { pathname, search } = requestTarget(req.url ?? '/');
    if (isStatusPath(pathname)) {
      if (!this.options.statusOnConsumerPort) throw new PorticoError('GW_NOT_FOUND');
      return this.answerStatus(req, res, tx, pathname);
    }
    const snapshot = this.snapshot;
    // A draining node still serves: its answers close their connections (see handle).
    if (snapshot === undefined) throw new PorticoError('GW_UNAVAILABLE', { reason: 'starting' });
    const oauth = this.options.oauth;
    const oauthRoute = oauth?.route(snapshot, pathname);
    if (oauthRoute !== undefined) return oauth!.serve(oauthRoute, req, res, snapshot, search);

    // 1. Route: 404, or 405 with Allow; a CORS preflight to the path is answered here.
    const route = routeRequest(snapshot.catalogs, req.method ?? 'GET', pathname, isPreflight(req));
    if ('preflight' in route) return this.finish(req, res, tx, preflightAnswer(req.headers, route.preflight));
    const { api, operation } = route;
    tx.api = api;
    tx.operation = operation;
    // 2. Security, before parameters: a caller who is not let in never learns the parameter rules.
    const query = search.length > 1 ? new URLSearchParams(search.slice(1)) : undefined;
    const found = authenticate(operation.security, { headers: req.headers, query }, callerDirectory(snapshot, api));
    const caller = (tx.caller = found instanceof Promise ? await found : found);
    // 3. Parameters (400).
    const parameters = readParameters(operation.parameters, req.headers, query, route.pathParams);
    // 4. Plan limits (429 with Retry-After; the rate-limit fields go on every answer).
    const limits = enforcePlanLimits(this.options.counters, caller.subscription);
    tx.limitHeaders = limits instanceof Promise ? await limits : limits;
    // 5. Request body (413, bounded).
    const read = readRequestBody(req, operation, this.options.maxRequestBytes);
    const body = (tx.requestBody = read instanceof Promise ? await read : read);
    // 6. Assembly.
    const context = requestContext(req, res, { route, caller, parameters, search, body }, this.contextDeps);
    tx.context = context;
    const requestCopy = context.message.headers;
    await api.flow(context);
    // 7. Response.
    this.respond(req, res, tx, context.message, requestCopy);
  }

  private respond(
    req: IncomingMessage,
    res: ServerResponse,
    tx: Transaction,
    message: MessageVar,
    requestCopy: Record<string, string>,
  ): void {
    const answer = messageAnswer(message, req.headers, requestCopy);
    if (tx.limitHeaders) answer.headers.setAll(tx.limitHeaders);
    this.finish(req, res, tx, answer);
  }

  /** Writes an error envelope for anything that went wrong. */
  private fail(res: ServerResponse, tx: Transaction, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // The security phase's refusal names the client id presented, for the activity event.
    if (error instanceof PorticoError && typeof error.params.clientId === 'string')
      tx.refusedClientId = error.params.clientId;
    this.finish(res.req, res, tx, errorAnswer(error, tx.txId, this.options.logger, tx.limitHeaders));
  }

  /** Common tail of every answer: transaction id, CORS, the write, the metrics and activity event. */
  private finish(req: IncomingMessage, res: ServerResponse, tx: Transaction, made: Answer): void {
    // A status an assembly set (set-variable, GatewayScript, throw) that cannot end the exchange.
    const answer = isFinalStatus(made.status) ? made : this.notFinal(tx, made.status);
    answer.headers.set('X-Global-Transaction-ID', tx.txId);
    if (tx.api?.definition.cors.enabled) addCorsHeaders(answer.headers, req.headers.origin);
    // A consumer that closed its connection gets nothing written to it; the log says so (499).
    if (consumerGone(res)) return this.record(req, tx, unansweredRecord(answer));
    writeAnswer(req, res, answer);
    this.record(req, tx, answer);
  }

  private notFinal(tx: Transaction, status: number): Answer {
    const error = new Error(`the answer's status ${status} is not a final HTTP status (200 to 599)`);
    return errorAnswer(error, tx.txId, this.options.logger, tx.limitHeaders);
  }

  private record(req: IncomingMessage, tx: Transaction, answer: Answer): void {
    const seconds = (performance.now() - tx.started) / 1000;
    recordRequest(tx.api, answer.status, seconds);
    const sink = this.options.sink;
    if (sink === undefined || tx.api === undefined) return;
    const caller = tx.caller;
    // A user-security policy may authenticate after the security phase: the context's
    // `request.authenticated-credential` (the one place both write) is read first.
    const named = tx.context?.request['authenticated-credential'];
    const event = buildActivityEvent({
      req,
      responseHeaders: () => answer.headers.toObject(),
      status: answer.status,
      txId: tx.txId,
      latencyMs: seconds * 1000,
      api: tx.api,
      operation: tx.operation,
      clientId: caller?.clientId ?? tx.refusedClientId,
      credential: caller?.credential,
      subscription: caller?.subscription,
      user: typeof named === 'string' ? named : caller?.user,
      backendMs: tx.context?.backendMs ?? 0,
      errorName: answer.errorName,
      requestBody: tx.requestBody,
      responseBody: answer.payload,
      maxPayloadBytes: this.options.analyticsMaxPayloadBytes ?? 65_536,
      redaction: this.redaction,
    });
    if (event) sink.record(event);
  }

  private async answerStatus(req: IncomingMessage, res: ServerResponse, tx: Transaction, path: string): Promise<void> {
    this.finish(req, res, tx, await statusAnswer(path, () => this.nodeState()));
  }

  private nodeState(): NodeState {
    return { snapshot: this.snapshot, draining: this.draining, health: this.health() };
  }

  /** Starts the consumer listener; resolves once bound. */
  listen(port: number, host: string): Promise<Server> {
    this.server = consumerServer(this.connections, this.handle);
    return bind(this.server, port, host);
  }

  /** Starts the status listener (`/health`, `/ready`, `/metrics`); resolves once bound. */
  listenStatus(port: number, host: string): Promise<Server> {
    this.statusServer = statusServer(this.handleStatus);
    return bind(this.statusServer, port, host);
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
      await drain(server, graceMs, () => this.abort.abort());
    }
    if (this.statusServer) await closeNow(this.statusServer);
    await this.options.sink?.close();
    await this.options.counters.close();
    await closeDispatchers();
    await this.options.policySettings.script.pool?.close();
  }
}
