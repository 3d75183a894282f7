/**
 * Try it: the portal server makes the call to the gateway for the developer (so no CORS set-up
 * is needed and the secret never leaves the page it was typed into), with a time limit, and
 * reports status, headers, body (pretty JSON when it is JSON) and the time taken.
 */
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
  clientId: string;
  clientSecret?: string;
  /** An OAuth access token to send as `Authorization: Bearer`. */
  bearer?: string;
  timeoutMs: number;
}

const maxBodyChars = 512 * 1024;

/** The gateway URL and request of an operation for the given form values. */
export function buildTryRequest(input: TryInput): { url: string; init: RequestInit } {
  const { operation, values } = input;
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
    encodeURIComponent(values[`param.path.${name}`] ?? ''),
  );
  const url = new URL(
    `${input.gatewayUrl.replace(/\/$/, '')}/${encodeURIComponent(input.orgName)}/${encodeURIComponent(input.catalogName)}${input.basePath}${path}`,
  );
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
  for (const parameter of operation.parameters) {
    const value = values[`param.${parameter.in}.${parameter.name}`];
    if (value === undefined || value === '') continue;
    if (parameter.in === 'query') url.searchParams.append(parameter.name, value);
    if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = value;
  }
  for (const credential of operation.credentials) {
    const value = credential.role === 'id' ? input.clientId : input.clientSecret;
    if (!value) continue;
    if (credential.in === 'header') headers[credential.name.toLowerCase()] = value;
    else url.searchParams.set(credential.name, value);
  }
  if (input.bearer !== undefined) headers.authorization = `Bearer ${input.bearer}`;
  // No declared placement and no token: API Connect's default header for the client id.
  else if (operation.credentials.length === 0) headers['x-ibm-client-id'] = input.clientId;
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
  const { url, init } = buildTryRequest(input);
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
