/**
 * The authorize endpoint (RFC 6749 §4.1.1, RFC 7636 §4.3): the authorization code grant with
 * PKCE. Until the client and its redirect URI are known good the answer is a page, never a
 * redirect (RFC 6749 §4.1.2.1: no open redirector); after that, errors go back to the client
 * with its `state`. The consent form is CSRF-protected by a double-submit token (a
 * `SameSite=Strict`, `HttpOnly` cookie that must equal the form's field) and cannot be framed.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oauth from '../store/oauth.ts';
import { hashToken, newToken } from '../store/secrets.ts';
import { consentPage, errorPage } from './consent-page.ts';
import { issuer, OAuthError, readForm, writeHead } from './http.ts';
import type { EndpointContext } from './http.ts';
import { signInOwner } from './owner-sign-in.ts';
import { grantedScope } from './token.ts';

const requestFields = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
];
const csrfCookie = 'portico_oauth_csrf';
// RFC 7636 §4.2: code_challenge = 43*128unreserved
const challengePattern = /^[A-Za-z0-9\-._~]{43,128}$/;

/** A checked authorization request. */
interface AuthorizationRequest {
  clientId: string;
  appTitle: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  challenge: string | null;
  method: string | null;
  fields: Record<string, string>;
}

/** Why a request cannot be answered by redirect: shown as a page. */
class PageError extends Error {}

/** An error to send back to the client's redirect URI. */
class RedirectError extends Error {
  constructor(
    readonly code: string,
    description: string,
  ) {
    super(description);
  }
}

function checkRequest(params: URLSearchParams, context: EndpointContext): AuthorizationRequest {
  const clientId = params.get('client_id');
  const credential = clientId === null ? undefined : context.credentials.get(clientId);
  if (clientId === null || credential === undefined || credential.app.catalogId !== context.provider.catalogId) {
    throw new PageError('The application is not known to this catalog.');
  }
  const registered = credential.app.redirectUris;
  const written = params.get('redirect_uri');
  // RFC 6749 §3.1.2.3: with one registered URI the parameter may be left out; otherwise exact match.
  const redirectUri = written ?? (registered.length === 1 ? registered[0] : undefined);
  if (redirectUri === undefined || !registered.includes(redirectUri)) {
    throw new PageError('The redirect URI is not one the application registered.');
  }
  const fields: Record<string, string> = {};
  for (const name of requestFields) {
    const value = params.getAll(name);
    if (value.length > 1) throw new RedirectError('invalid_request', `${name} is repeated`);
    if (value.length === 1) fields[name] = value[0];
  }
  const config = context.provider.config;
  const base = { clientId, appTitle: credential.app.title, redirectUri, state: params.get('state'), fields };
  if (params.get('response_type') !== 'code')
    throw new RedirectError('unsupported_response_type', 'response_type must be code');
  if (!config.grants.includes('access_code'))
    throw new RedirectError('unauthorized_client', 'this provider does not issue codes');
  let scope: string;
  try {
    scope = grantedScope(params.get('scope'), Object.keys(config.scopes));
  } catch (error) {
    throw new RedirectError('invalid_scope', (error as Error).message);
  }
  if (!config.pkce.enabled) return { ...base, scope, challenge: null, method: null };
  const challenge = params.get('code_challenge');
  const method = params.get('code_challenge_method') ?? (challenge === null ? null : 'plain');
  if (challenge === null) {
    if (config.pkce.required) throw new RedirectError('invalid_request', 'code_challenge is required (PKCE)');
    return { ...base, scope, challenge: null, method: null };
  }
  if (!challengePattern.test(challenge)) throw new RedirectError('invalid_request', 'code_challenge is malformed');
  if (method !== 'S256' && !(method === 'plain' && config.pkce.allowPlain)) {
    throw new RedirectError('invalid_request', 'code_challenge_method must be S256');
  }
  return { ...base, scope, challenge, method };
}

function redirectTo(
  res: ServerResponse,
  request: Pick<AuthorizationRequest, 'redirectUri' | 'state'>,
  params: Record<string, string>,
  context: EndpointContext,
) {
  const target = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(params)) target.searchParams.append(name, value);
  if (request.state !== null) target.searchParams.append('state', request.state);
  // RFC 9207: the issuer in the response, so a client talking to several servers cannot be mixed up.
  target.searchParams.append('iss', issuer(context));
  writeHead(res, 302, { location: target.href, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

function pageHeaders(formTarget?: string): Record<string, string> {
  // form-action also governs the redirect that follows the POST: the client's origin is allowed.
  const formAction = formTarget === undefined ? "'self'" : `'self' ${new URL(formTarget).origin}`;
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': `default-src 'none'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  };
}

function sendPage(res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
  writeHead(res, status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

interface Refusal {
  status: number;
  'retry-after'?: string;
}

function showConsent(
  res: ServerResponse,
  request: AuthorizationRequest,
  context: EndpointContext,
  path: string,
  error?: string,
  refusal: Refusal = { status: 401 },
) {
  const csrf = randomBytes(32).toString('base64url');
  const scopes = request.scope
    .split(' ')
    .map((name) => ({ name, description: context.provider.config.scopes[name] ?? '' }));
  const body = consentPage({
    providerTitle: context.provider.config.title,
    appTitle: request.appTitle,
    scopes,
    request: request.fields,
    csrf,
    action: path,
    error,
  });
  const cookie = `${csrfCookie}=${csrf}; Path=${path}; HttpOnly; SameSite=Strict${context.origin.startsWith('https') ? '; Secure' : ''}`;
  const { status, ...extra } = refusal;
  sendPage(res, error === undefined ? 200 : status, body, {
    ...pageHeaders(request.redirectUri),
    ...extra,
    'set-cookie': cookie,
  });
}

function csrfHolds(req: IncomingMessage, form: URLSearchParams): boolean {
  const cookie = readCookie(req, csrfCookie);
  const field = form.get('csrf');
  if (cookie === undefined || field === null || cookie.length < 32) return false;
  const a = Buffer.from(cookie);
  const b = Buffer.from(field);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function decide(
  req: IncomingMessage,
  res: ServerResponse,
  context: EndpointContext,
  path: string,
): Promise<void> {
  const form = await readForm(req);
  const request = checkRequest(form, context);
  if (!csrfHolds(req, form))
    throw new PageError('The form expired or did not come from this page; start again from the application.');
  if (form.get('decision') !== 'allow') return redirectTo(res, request, { error: 'access_denied' }, context);
  const verdict = await signInOwner(context, form.get('username') ?? '', form.get('password') ?? '');
  if (verdict.outcome === 'unavailable')
    throw new RedirectError('temporarily_unavailable', 'the user registry cannot be used');
  if (verdict.outcome === 'refused') return showConsent(res, request, context, path, 'Invalid user name or password.');
  if (verdict.outcome === 'limited') {
    const message = `Too many sign-in attempts; try again in ${verdict.seconds} seconds.`;
    return showConsent(res, request, context, path, message, {
      status: 429,
      'retry-after': String(verdict.seconds),
    });
  }
  const code = newToken();
  await oauth.insertCode(context.store.db, {
    code_hash: hashToken(code),
    grant_id: randomUUID(),
    provider_id: context.provider.id,
    catalog_id: context.provider.catalogId,
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    redirect_uri_named: request.fields.redirect_uri === undefined ? 0 : 1,
    scope: request.scope,
    username: verdict.user,
    challenge: request.challenge,
    challenge_method: request.method,
    expires_at: Math.floor(Date.now() / 1000) + context.provider.config.codeTtl,
  });
  redirectTo(res, request, { code }, context);
}

/** Answers GET (the page) and POST (the decision) on the authorize path. */
export async function authorizeEndpoint(
  req: IncomingMessage,
  res: ServerResponse,
  context: EndpointContext,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  let request: Pick<AuthorizationRequest, 'redirectUri' | 'state'> | undefined;
  try {
    if (req.method === 'POST') return await decide(req, res, context, path);
    if (req.method !== 'GET') throw new OAuthError('invalid_request', 'use GET or POST', 405, { allow: 'GET, POST' });
    const checked = checkRequest(query, context);
    request = checked;
    showConsent(res, checked, context, path);
  } catch (error) {
    if (error instanceof PageError) return sendPage(res, 400, errorPage(error.message), pageHeaders());
    if (!(error instanceof RedirectError)) throw error;
    request ??= redirectTarget(req.method === 'GET' ? query : undefined, context);
    if (request === undefined) return sendPage(res, 400, errorPage(error.message), pageHeaders());
    redirectTo(res, request, { error: error.code, error_description: error.message }, context);
  }
}

/** The checked redirect target of a request whose other parameters were wrong. */
function redirectTarget(query: URLSearchParams | undefined, context: EndpointContext) {
  if (query === undefined) return undefined;
  try {
    checkRequest(query, context);
    return undefined;
  } catch {
    const credential = context.credentials.get(query.get('client_id') ?? '');
    const registered = credential?.app.redirectUris ?? [];
    const redirectUri = query.get('redirect_uri') ?? (registered.length === 1 ? registered[0] : undefined);
    const known =
      credential?.app.catalogId === context.provider.catalogId &&
      redirectUri !== undefined &&
      credential.app.redirectUris.includes(redirectUri);
    return known ? { redirectUri: redirectUri!, state: query.get('state') } : undefined;
  }
}
