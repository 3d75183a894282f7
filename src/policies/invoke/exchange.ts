/**
 * One backend call, read whole: `dispatcher.dispatch` with a handler that collects the answer's
 * bytes as they arrive, up to a bound. undici's `request()` wraps the same call in a
 * RequestHandler, a Readable stream for the body and a promise per call, and the body was then
 * read back out of that stream; on the gateway thread that was a few kilobytes per call to
 * collect (issue 18). What it did is kept: the answer's headers parsed as `request()` parses
 * them, informational (1xx) answers skipped, the headers and body timeouts (the dispatch
 * options), the call ended when `signal` aborts, and a body over the bound ends the connection
 * rather than being read to its end. The call also ends when its consumer goes away: the handler
 * listens on the consumer's connection only while the call is in flight.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errors } from 'undici';
import type { Dispatcher } from 'undici';
import { InFlight } from '../../in-flight.ts';
import type { FlowContext } from '../types.ts';

/** A backend's answer, its body read whole. */
export interface BackendAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ExchangeOptions {
  /** Bytes of body allowed; one more ends the call with `tooLarge()`. */
  limit: number;
  tooLarge(): Error;
  /** Ends the call when it aborts (with its reason, as `request()` did). */
  signal: AbortSignal;
  /** The consumer the call is made for: the call ends when it goes away. */
  consumer?: Consumer;
}

/** The slice of the flow context that tells when the consumer goes away. */
export type Consumer = Pick<FlowContext, 'consumerGone' | 'watchConsumer' | 'unwatchConsumer'>;

/**
 * Sends `request` through `dispatcher` and resolves with the whole answer; rejects with undici's
 * error (refused, reset, `HeadersTimeoutError`, `BodyTimeoutError`…), the signal's reason, a
 * `RequestAbortedError` when the consumer went away, or `tooLarge()`.
 */
export function exchange(
  dispatcher: Dispatcher,
  request: Dispatcher.DispatchOptions,
  options: ExchangeOptions,
): Promise<BackendAnswer> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(request, new ExchangeHandler(options, resolve, reject));
  });
}

/**
 * The calls in flight on each stop signal, which one listener ends together. Before, each call
 * added and removed a listener on the gateway's long-lived signal, and Node's EventTarget keeps a
 * removed listener linked to its neighbours (bench/README.md, Session 7); then a Set of calls, which
 * kept finished calls alive in the same way once its table was old (in-flight.ts; Session 13).
 */
const inFlight = new WeakMap<AbortSignal, InFlight<ExchangeHandler>>();

function callsOn(signal: AbortSignal): InFlight<ExchangeHandler> {
  let calls = inFlight.get(signal);
  if (calls === undefined) {
    const register = new InFlight<ExchangeHandler>();
    signal.addEventListener('abort', () => register.forEach((call) => call.stopped()));
    inFlight.set(signal, register);
    calls = register;
  }
  return calls;
}

/**
 * The handler of one exchange; it is in its stop signal's calls in flight (`stopped` ends it)
 * and, for as long as the call is in flight, a listener on the consumer's connection
 * (`consumerClosed`).
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode = 0;
  private headers: IncomingHttpHeaders | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  // Listens on the consumer's connection (an EventEmitter) while the call is in flight.
  private readonly consumerClosed: (() => void) | undefined;
  // Its stop signal's calls in flight, looked up once, and its slot there.
  private readonly calls: InFlight<ExchangeHandler>;
  private readonly slot: number;

  constructor(
    private readonly options: ExchangeOptions,
    private readonly resolve: (answer: BackendAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.calls = callsOn(options.signal);
    this.slot = this.calls.add(this);
    const consumer = options.consumer;
    if (consumer !== undefined) {
      this.consumerClosed = () => {
        if (consumer.consumerGone) this.controller?.abort(consumerLeft());
      };
      consumer.watchConsumer(this.consumerClosed);
    }
  }

  /** The request is about to be written to a connection. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Aborted, or the consumer gone, while the request waited for a connection: it is never sent.
    if (this.options.signal.aborted) controller.abort(abortReason(this.options.signal));
    else if (this.options.consumer?.consumerGone) controller.abort(consumerLeft());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.options.limit) {
      const error = this.options.tooLarge();
      this.settle(error);
      controller.abort(error);
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const { chunks, size } = this;
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    this.settle(undefined, { statusCode: this.statusCode, headers: this.headers ?? {}, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    this.settle(error);
  }

  /** The signal aborted: end the call now if it is on a connection (else {@link onRequestStart} will). */
  stopped(): void {
    this.controller?.abort(abortReason(this.options.signal));
  }

  private settle(error: unknown, answer?: BackendAnswer): void {
    if (this.settled) return;
    this.settled = true;
    this.calls.take(this.slot);
    if (this.consumerClosed !== undefined) this.options.consumer?.unwatchConsumer(this.consumerClosed);
    if (answer !== undefined) this.resolve(answer);
    else this.reject(error);
  }
}

/** What `request()` ended an aborted call with. */
function abortReason(signal: AbortSignal): Error {
  return (signal.reason as Error | undefined) ?? new errors.RequestAbortedError();
}

/** What ends a call whose consumer went away. */
function consumerLeft(): Error {
  return new errors.RequestAbortedError('the consumer closed its connection');
}
