/**
 * Try it: the portal server makes the call to the gateway for the developer (so no CORS set-up
 * is needed and the secret never leaves the page it was typed into), with a time limit, and
 * reports status, headers, body (pretty JSON when it is JSON) and the time taken.
 */
import type { SupportedScheme } from '../definitions/security-support.ts';
import type { OperationView } from '../web/openapi-view.ts';
import type { TryToken } from './oauth-view.ts';

export interface TryResult {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
  timeMs: number;
  /** Set when no HTTP answer came back (timeout, connection refused) or no token was issued. */
  error?: string;
  /** The OAuth token the call carried: its scopes and expiry, never the token. */
  token?: TryToken;
}

export interface TryInput {
  gatewayUrl: string;
  orgName: string;
  catalogName: string;
  basePath: string;
  operation: OperationView;
  /** Form values, keyed `param.<in>.<name>`. */
  values: Record<string, string>;
  body?: string;
  /** The schemes of the security alternative chosen (none: an open call). */
  schemes: readonly SupportedScheme[];
  clientId: string;
  clientSecret?: string;
  /** HTTP basic user name and password, for a `basic` scheme. */
  basic?: { username: string; password: string };
  /** An OAuth access token to send as `Authorization: Bearer`. */
  bearer?: string;
  timeoutMs: number;
}

const maxBodyChars = 512 * 1024;

/** Form values that cannot make a call to the operation; shown as the Try it error, nothing sent. */
export class TryRefused extends Error {}

/** The gateway URL and request of an operation for the given form values. */
export function buildTryRequest(input: TryInput): { url: string; init: RequestInit } {
  const { operation, values } = input;
  // encodeURIComponent leaves "." and ".." as they are (and the URL parser decodes "%2E" too),
  // so such a value would be resolved as a dot segment, out of the operation's path: refused.
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const value = values[`param.path.${name}`] ?? '';
    if (value === '.' || value === '..') throw new TryRefused(`The path parameter ${name} cannot be "${value}"`);
    return encodeURIComponent(value);
  });
  const gateway = input.gatewayUrl.replace(/\/$/, '');
  const prefix = `/${encodeURIComponent(input.orgName)}/${encodeURIComponent(input.catalogName)}${input.basePath}`;
  const url = new URL(`${gateway}${prefix}${path}`);
  // Whatever the values, the call stays under {gateway}/{org}/{catalog}{basePath}.
  const expected = new URL(`${gateway}${prefix}`).pathname.replace(/\/?$/, '/');
  if (!`${url.pathname}/`.startsWith(expected)) throw new TryRefused(`The call would leave the API's path ${expected}`);
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
  for (const parameter of operation.parameters) {
    const value = values[`param.${parameter.in}.${parameter.name}`];
    if (value === undefined || value === '') continue;
    if (parameter.in === 'query') url.searchParams.append(parameter.name, value);
    if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = value;
  }
  for (const scheme of input.schemes) {
    const value =
      scheme.role === 'client-id' ? input.clientId : scheme.role === 'client-secret' ? input.clientSecret : '';
    if (!value) continue;
    if (scheme.in === 'header') headers[scheme.name.toLowerCase()] = value;
    else url.searchParams.set(scheme.name, value);
  }
  // RFC 7617 §2: user-id ":" password, UTF-8, base64.
  if (input.basic !== undefined)
    headers.authorization = `Basic ${Buffer.from(`${input.basic.username}:${input.basic.password}`).toString('base64')}`;
  if (input.bearer !== undefined) headers.authorization = `Bearer ${input.bearer}`;
  // An open call still names the app (API Connect's default header), so it shows in its analytics.
  else if (input.schemes.length === 0) headers['x-ibm-client-id'] = input.clientId;
  const init: RequestInit = { method: operation.method, headers, redirect: 'manual' };
  if (input.body !== undefined && input.body !== '' && !['GET', 'HEAD'].includes(operation.method)) {
    init.body = input.body;
    headers['content-type'] = operation.body?.contentType ?? 'application/json';
  }
  return { url: url.toString(), init };
}

function pretty(text: string, contentType: string): string {
  if (!/json/i.test(contentType) && !/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Sends the call to the gateway and describes the answer. */
export async function relayTryIt(input: TryInput): Promise<TryResult> {
  let built: ReturnType<typeof buildTryRequest>;
  try {
    built = buildTryRequest(input);
  } catch (error) {
    if (!(error instanceof TryRefused)) throw error;
    return { status: 0, statusText: '', headers: [], body: '', timeMs: 0, error: error.message };
  }
  const { url, init } = built;
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(input.timeoutMs) });
    const raw = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const headers = [...response.headers.entries()].filter(([name]) => name !== 'set-cookie');
    const body = pretty(raw.length > maxBodyChars ? raw.slice(0, maxBodyChars) : raw, contentType);
    return {
      status: response.status,
      statusText: response.statusText,
      headers,
      body,
      timeMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    const reason = timedOut
      ? `no answer within ${input.timeoutMs / 1000} seconds`
      : `the gateway could not be reached (${(error as Error).message})`;
    return {
      status: 0,
      statusText: '',
      headers: [],
      body: '',
      timeMs: Math.round(performance.now() - started),
      error: `No response received: ${reason}`,
    };
  }
}
