/**
 * `invoke` (and `proxy`): calls a backend through pooled undici connections (IBM "invoke").
 *
 * Sends the current `message` (headers and body) with `verb` (`keep` = the request's verb),
 * and stores the answer in `output` (default `message`) as `{status, headers, body}` with the
 * body kept as raw bytes until something reads it.
 *
 * Errors, by API Connect's names: a refused or timed-out connection is `ConnectionError`; a
 * 4xx/5xx answer is `OperationError`; a SOAP Fault is `SOAPError`, always raised (catchable).
 * `stop-on-error` lists the other errors that stop the flow (and go to `catch`); any other error lets the flow go on with the
 * output variable holding what came back — for a connection failure, an error object with
 * status 502 or 504. The one exception: a connection failure when the output is `message`
 * itself always stops the flow, because no answer exists to pass on. A consumer that closes its
 * connection ends the call (undici closes the backend's request) with `ConsumerClosedError`, 499.
 */
import { policy } from '../schema-kit.ts';
import { invokeFields } from './schema.ts';
import { interceptors, errors as undiciErrors } from 'undici';
import type { Dispatcher } from 'undici';
import { PorticoError } from '../../errors.ts';
import { answerFields, hopByHopFields } from '../http-fields.ts';
import { describeConnectError, faultString, isSoapFault } from './backend-errors.ts';
import { decodeAnswer } from './decode-answer.ts';
import { dispatcherFor, tlsProfileName, tlsProfilesOf } from './dispatchers.ts';
import { exchange } from './exchange.ts';
import { readTarget } from './target-url.ts';
import type { SplitUrl } from './target-url.ts';
import type { BackendAnswer } from './exchange.ts';
import { definePolicy, problemsInEveryCatalog, problemsOf } from '../policy.ts';
import { prototypeFree } from '../variable-names.ts';
import { AssemblyError, ConsumerClosedError, PolicyCompileError, RawBody } from '../types.ts';
import type {
  CheckScope,
  CompiledApiInfo,
  FlowContext,
  MessageVar,
  PolicyProblem,
  PolicyType,
  Step,
} from '../types.ts';

/** header-control and parameter-control; both fields are defaulted by the schema. */
interface AccessControl {
  type: 'blocklist' | 'allowlist' | 'blacklist' | 'whitelist';
  values: string[];
}

export interface InvokeConfig {
  version?: string;
  title?: string;
  description?: string;
  'target-url': string;
  verb: string;
  timeout: number;
  output?: string;
  'stop-on-error': Array<string | null>;
  'header-control': AccessControl;
  'parameter-control': AccessControl;
  'backend-type'?: 'detect' | 'json' | 'xml' | 'binary' | 'graphql';
  username?: string;
  password?: string;
  'tls-profile'?: string;
  'follow-redirects'?: boolean;
  'inject-proxy-headers'?: boolean;
  [other: string]: unknown;
}

// RFC 9110 §7.6.1: hop-by-hop fields are not forwarded; `host` and `content-length` are set anew.
// Hop-by-hop fields, plus the ones the connection to the backend sets itself.
const hopByHop = new Set([...hopByHopFields, 'host', 'expect']);

// Credentials of the consumer never reach the backend (API Connect's
// x-ibm-gateway-invoke-suppress-clientid, default true; the secret always).
const consumerCredentials = new Set(['x-ibm-client-id', 'x-ibm-client-secret']);

interface HeaderFilter {
  (name: string): boolean;
}

/** API Connect's older names: `whitelist` is an allowlist, `blacklist` a blocklist. */
function isAllowlist(type: InvokeConfig['header-control']['type']): boolean {
  return type === 'allowlist' || type === 'whitelist';
}

function headerFilter(control: InvokeConfig['header-control']): HeaderFilter {
  const values = new Set(control.values.map((v) => v.toLowerCase()));
  if (isAllowlist(control.type)) return (name) => values.has(name);
  return (name) => !values.has(name);
}

function stopSet(config: InvokeConfig): Set<string> {
  return new Set(config['stop-on-error'].filter((v): v is string => typeof v === 'string' && v.length > 0));
}

function timeoutMs(config: InvokeConfig, path: string): number {
  const seconds = config.timeout;
  if (!(seconds > 0) || seconds > 86_400) {
    throw new PolicyCompileError(`${path}.timeout`, 'range', 'timeout must be a number of seconds from 1 to 86400');
  }
  return seconds * 1000;
}

function statusReason(status: number): string {
  return status >= 200 && status < 300 ? 'OK' : String(status);
}

function bodyBytes(message: MessageVar): Buffer | string | undefined {
  const body = message.body;
  if (body === undefined || body === null || body === '') return undefined;
  if (body instanceof RawBody) return body.bytes.length === 0 ? undefined : body.bytes;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return body;
  return JSON.stringify(body);
}

/**
 * The query parameters of the request to forward per parameter-control, decided at compile
 * time: the default (an empty allowlist) forwards nothing and costs nothing per request.
 */
function compileForwardedQuery(control: InvokeConfig['parameter-control']): ((ctx: FlowContext) => string) | undefined {
  const allow = isAllowlist(control.type);
  const values = new Set(control.values);
  if (allow && values.size === 0) return undefined;
  return function forwardedQuery(ctx: FlowContext): string {
    const incoming = new URLSearchParams(ctx.request.search);
    const kept = new URLSearchParams();
    for (const [name, value] of incoming) {
      if (allow ? values.has(name) : !values.has(name)) kept.append(name, value);
    }
    return kept.toString();
  };
}

/** What import can know of an invoke: its timeout, and its target URL in every catalog. */
function invokeProblems(config: InvokeConfig, scope: CheckScope, path: string): PolicyProblem[] {
  return [
    ...problemsInEveryCatalog(scope.propertySets, (properties) => readTarget(config['target-url'], properties, path)),
    ...problemsOf(() => timeoutMs(config, path)),
  ];
}

/** Compiles an invoke policy into its step. */
export function compileInvoke(
  config: InvokeConfig,
  api: CompiledApiInfo,
  path: string,
  kind: 'invoke' | 'proxy' = 'invoke',
): Step {
  const { url, constant: constantTarget } = readTarget(config['target-url'], api.properties, path);
  const title = config.title ?? kind;
  const verb = config.verb.toUpperCase();
  const timeout = timeoutMs(config, path);
  const output = config.output && config.output.length > 0 ? config.output : 'message';
  const stops = stopSet(config);
  const allowHeader = headerFilter(config['header-control']);
  const forwardedQuery = compileForwardedQuery(config['parameter-control']);
  const profiles = { tlsProfiles: tlsProfilesOf(api.settings, api.catalog.orgName) };
  const profile = tlsProfileName(config['tls-profile'], profiles, path);
  const followRedirects = config['follow-redirects'] === true;
  // undici 7 follows redirects only through its interceptor (a `maxRedirections` option on the
  // call itself is refused, which failed every such call with 502).
  const pool = dispatcherFor(profile, profiles);
  const dispatcher = followRedirects ? pool.compose(interceptors.redirect({ maxRedirections: 5 })) : pool;
  const maxBytes = api.settings.maxBackendBodyBytes;
  const basicAuth =
    typeof config.username === 'string' && config.username.length > 0
      ? `Basic ${Buffer.from(`${config.username}:${config.password ?? ''}`).toString('base64')}`
      : undefined;

  const backendTooLarge = () =>
    new AssemblyError('ConnectionError', `the backend response is larger than ${maxBytes} bytes`, { status: 502 });
  const backendCorrupt = (coding: string) =>
    new AssemblyError('ConnectionError', `the backend response is not valid ${coding}`, { status: 502 });
  const decodeBounds = { limit: maxBytes, tooLarge: backendTooLarge, corrupt: backendCorrupt };
  const fail = (errorName: string, message: string, status: number, cause?: unknown): AssemblyError =>
    new AssemblyError(errorName, message, { status, policy: title, cause });

  /** The backend URL for this request, checked by the template (url-template.ts). */
  function targetOf(ctx: FlowContext): SplitUrl {
    const extraQuery = forwardedQuery?.(ctx);
    if (constantTarget !== undefined && !extraQuery) return constantTarget;
    let target: URL;
    try {
      target = url.resolve(ctx);
    } catch (error) {
      throw targetError(error);
    }
    if (extraQuery) target.search = target.search.length > 1 ? `${target.search}&${extraQuery}` : extraQuery;
    return { origin: target.origin, path: target.pathname + target.search, protocol: target.protocol };
  }

  // A value the request supplied that would leave the target is the consumer's error (400, not
  // retried, not in the default catch); a base URL the flow itself set that is unusable is the
  // API's (502, as for any unreachable backend).
  function targetError(error: unknown): AssemblyError {
    if (error instanceof PorticoError && error.code === 'GW_UNSAFE_TARGET_VALUE') {
      return new AssemblyError('BadRequestError', error.message, {
        status: error.status,
        policy: title,
        cause: error,
      });
    }
    if (error instanceof PorticoError) return fail('ConnectionError', error.message, error.status, error);
    return fail('ConnectionError', `invalid target URL: ${(error as Error).message}`, 502, error);
  }

  return async function invoke(ctx: FlowContext): Promise<void> {
    // Nobody would read the answer: the backend is not called (a flow that waited on an earlier
    // step ends before this one; a catch or finally block may still reach it).
    if (ctx.consumerGone) throw new ConsumerClosedError({ policy: title });
    // http(s) only: a written scheme is checked at compile, one a value brings by the template (url-template.ts).
    const parsed = targetOf(ctx);

    const message = ctx.message;
    // Own fields only, into an object without a prototype: an inherited or `__proto__` key
    // must not become a header of the backend call.
    const headers = prototypeFree<Record<string, string>>();
    const incoming = message.headers;
    for (const name of Object.keys(incoming)) {
      const lower = name.toLowerCase();
      if (hopByHop.has(lower) || consumerCredentials.has(lower) || !allowHeader(lower)) continue;
      headers[lower] = incoming[name];
    }
    if (basicAuth) headers.authorization = basicAuth;
    const method = verb === 'KEEP' ? ctx.request.verb : verb;
    const body = method === 'GET' || method === 'HEAD' ? undefined : bodyBytes(message);

    const started = performance.now();
    let response: BackendAnswer;
    try {
      const answer = await exchange(
        dispatcher,
        {
          origin: parsed.origin,
          path: parsed.path,
          method: method as Dispatcher.HttpMethod,
          headers,
          body,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        } as Dispatcher.DispatchOptions,
        { limit: maxBytes, tooLarge: backendTooLarge, signal: ctx.signal, consumer: ctx },
      );
      const decoded = decodeAnswer(answer, decodeBounds);
      response = decoded instanceof Promise ? await decoded : decoded;
    } catch (error) {
      ctx.backendMs += performance.now() - started;
      if (error instanceof AssemblyError) throw error;
      return connectionFailure(ctx, error);
    }
    ctx.backendMs += performance.now() - started;
    const bytes = response.body;

    const responseHeaders = answerFields(response.headers, hopByHop);
    const contentType = responseHeaders['content-type'];
    const result: MessageVar = {
      status: { code: response.statusCode, reason: statusReason(response.statusCode) },
      headers: responseHeaders,
      body: new RawBody(bytes, contentType),
    };
    writeOutput(ctx, result);

    // A SOAP Fault always raises SOAPError (catchable): the reply carries no result to map.
    if (response.statusCode >= 400 && isSoapFault(bytes, contentType))
      throw fail('SOAPError', faultString(bytes, maxBytes), 500);
    if (response.statusCode >= 400 && stops.has('OperationError')) {
      throw fail(
        'OperationError',
        `the backend answered ${response.statusCode}`,
        response.statusCode >= 500 ? 500 : response.statusCode,
      );
    }
  };

  function writeOutput(ctx: FlowContext, result: MessageVar): void {
    if (output === 'message') {
      const message = ctx.message;
      message.status = result.status;
      message.headers = result.headers;
      message.body = result.body;
    } else {
      ctx.set(output, result);
    }
  }

  function connectionFailure(ctx: FlowContext, error: unknown): void {
    const timedOut =
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      error instanceof undiciErrors.ConnectTimeoutError;
    const status = timedOut ? 504 : 502;
    const reason = timedOut ? `no answer within ${timeout / 1000} seconds` : describeConnectError(error);
    if (ctx.signal.aborted) throw fail('ConnectionError', 'the request was aborted', 499, error);
    if (ctx.consumerGone) throw new ConsumerClosedError({ policy: title, cause: error });
    if (output === 'message' || stops.has('ConnectionError')) {
      throw fail('ConnectionError', reason, status, error);
    }
    writeOutput(ctx, {
      status: { code: status, reason: timedOut ? 'Gateway Timeout' : 'Bad Gateway' },
      headers: { 'content-type': 'application/json' },
      body: {
        httpCode: String(status),
        httpMessage: timedOut ? 'Gateway Timeout' : 'Bad Gateway',
        moreInformation: reason,
      },
    });
  }
}

export const invokePolicy: PolicyType = definePolicy<InvokeConfig>({
  name: 'invoke',
  versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0', '2.3.0'],
  description: 'Calls a backend URL and stores the response in output (default message).',
  schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0', '2.3.0'], invokeFields, ['target-url']),
  check: invokeProblems,
  compile: (config, api, path) => compileInvoke(config, api, path, 'invoke'),
});

export const proxyPolicy: PolicyType = definePolicy<InvokeConfig>({
  name: 'proxy',
  versions: ['1.0.0', '2.0.0'],
  description: 'Forwards the request to a backend URL and returns its response as the API response.',
  schema: policy(['1.0.0', '2.0.0'], invokeFields, ['target-url']),
  check: invokeProblems,
  compile: (config, api, path) => compileInvoke(config, api, path, 'proxy'),
});
