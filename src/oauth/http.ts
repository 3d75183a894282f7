/**
 * What every endpoint of the native OAuth provider shares: reading the form body, answering
 * JSON with `Cache-Control: no-store` (RFC 6749 §5.1), RFC 6749 §5.2 errors, the issuer URL,
 * and client authentication by `client_secret_basic` or `client_secret_post` (RFC 6749 §2.3.1).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CredentialInfo } from '../gateway/snapshot.ts';
import { secretMatches } from '../store/secrets.ts';
import type { Store } from '../store/store.ts';
import type { SignInLimiter } from '../web/sign-in-limiter.ts';
import type { CompiledProvider } from './compile.ts';
import type { ChangeKind } from '../store/changes.ts';

/** What an endpoint needs besides the request: the store (token endpoint writes) and the snapshot's parts. */
export interface EndpointContext {
  store: Store;
  provider: CompiledProvider;
  credentials: ReadonlyMap<string, CredentialInfo>;
  revoked: ReadonlySet<string>;
  /** The gateway's origin as the client reached it, e.g. `https://api.example.com`. */
  origin: string;
  /** Tells this node (and, through the store, the others) that a revocation happened. */
  changed(kind: ChangeKind): Promise<void>;
  /** Resource owner sign-ins (consent page, password grant) are limited like the portal's. */
  signInLimiter: SignInLimiter;
  /** The client's address (see `clientAddress`), the limiter's per-address key. */
  address: string;
}

/** An RFC 6749 §5.2 error: `error`, its status, an optional description and extra headers. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

const maxFormBytes = 16 * 1024;

/** The `application/x-www-form-urlencoded` body of a POST (RFC 6749 §3.2), at most 16 KiB. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  if (req.method !== 'POST') throw new OAuthError('invalid_request', 'use POST', 405, { allow: 'POST' });
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxFormBytes) throw new OAuthError('invalid_request', 'the body is too large', 413);
    chunks.push(chunk as Buffer);
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  // RFC 6749 §3.1, §3.2: parameters must not be included more than once.
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (seen.has(name)) throw new OAuthError('invalid_request', `${name} is repeated`);
    seen.add(name);
  }
  return form;
}

/**
 * Writes the head of an answer. One written before the request's body was read to its end (the
 * 413 past 16 KiB, a refusal before {@link readForm} reads) closes the connection once written
 * (RFC 9112 §9.6; Node ends the socket once the answer is flushed), as the gateway's own answers
 * do (`writeAnswer`): reading the rest to keep the connection would let a body that never ends
 * hold it, and the gateway's reading, until the request timeout.
 */
export function writeHead(res: ServerResponse, status: number, headers: Record<string, string | number>): void {
  const unread = !res.req.complete;
  res.writeHead(status, unread ? { ...headers, connection: 'close' } : headers);
}

/** A JSON answer that no cache may keep (tokens, introspection). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  writeHead(res, status, {
    'content-type': 'application/json;charset=UTF-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: OAuthError): void {
  sendJson(res, error.status, { error: error.error, error_description: error.description }, error.headers);
}

const hostPattern = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** `http(s)://host` as the client reached the gateway, or undefined for a malformed Host. */
export function requestOrigin(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (host === undefined || !hostPattern.test(host)) return undefined;
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true;
  return `${secure ? 'https' : 'http'}://${host}`;
}

export function issuer(context: EndpointContext): string {
  return `${context.origin}${context.provider.issuerPath}`;
}

/** The authenticated client: its id, its credential, and whether it proved a secret (public clients do not). */
export interface Client {
  clientId: string;
  credential: CredentialInfo;
  confidential: boolean;
}

// Hashed when the client id is unknown, so an unknown id costs what a wrong secret costs.
const noHash = '0'.repeat(64);

function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** client_secret_basic: `Authorization: Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1). */
function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (match === null) return undefined;
  const text = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  const id = formDecode(text.slice(0, colon));
  const secret = formDecode(text.slice(colon + 1));
  return id === undefined || secret === undefined ? undefined : { id, secret };
}

/** RFC 6749 §5.2: 401 invalid_client, with the `WWW-Authenticate` challenge of the authentication the client should use. */
export function clientAuthenticationFailed(context: EndpointContext): OAuthError {
  const challenge = { 'www-authenticate': `Basic realm="${context.provider.issuerPath}", charset="UTF-8"` };
  return new OAuthError('invalid_client', 'client authentication failed', 401, challenge);
}

/**
 * Authenticates the client of a token, introspection or revocation request. A client of another
 * catalog is unknown here. `allowPublic`: a client id alone (no secret) is accepted, for public
 * clients whose grant PKCE protects.
 * @throws OAuthError invalid_client (401 with `WWW-Authenticate`) or invalid_request (two methods).
 */
export function authenticateClient(
  req: IncomingMessage,
  form: URLSearchParams,
  context: EndpointContext,
  allowPublic: boolean,
): Client {
  const header = req.headers.authorization;
  const posted = form.get('client_secret');
  const refuse = () => clientAuthenticationFailed(context);
  let id: string | null;
  let secret: string | null;
  if (header !== undefined) {
    // RFC 6749 §2.3: a client uses only one authentication method per request.
    if (posted !== null) throw new OAuthError('invalid_request', 'use one client authentication method');
    const basic = basicCredentials(header);
    if (basic === undefined) throw refuse();
    if (form.get('client_id') !== null && form.get('client_id') !== basic.id) throw refuse();
    ({ id, secret } = basic);
  } else {
    id = form.get('client_id');
    secret = posted;
  }
  if (id === null || id === '') throw refuse();
  const credential = context.credentials.get(id);
  const inCatalog = credential !== undefined && credential.app.catalogId === context.provider.catalogId;
  if (secret === null) {
    if (allowPublic && inCatalog && context.provider.config.clients.includes('public')) {
      return { clientId: id, credential: credential!, confidential: false };
    }
    throw refuse();
  }
  const matches = secretMatches(secret, credential?.secretHash ?? noHash);
  if (!matches || !inCatalog) throw refuse();
  return { clientId: id, credential: credential!, confidential: true };
}
