/**
 * Try it's authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636, S256 only): the portal
 * is the OAuth client. It sends the developer's browser to the provider's authorize endpoint
 * with a fresh `state` and code challenge, keeps the state and verifier in the server-side
 * session (never in the page or a URL), takes the code back at `<portal>/oauth/callback`, and
 * redeems it server-side. The access token then stays in the session until it expires: Try it
 * uses it, the page shows only its scope and expiry.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Session } from '../store/schema.ts';
import type { PortalDeps } from './deps.ts';
import { requestToken } from './oauth-view.ts';
import type { TokenOutcome, TryToken } from './oauth-view.ts';

/** The path of the redirect URI the portal serves; a developer registers `<portal>` + this on the app. */
export const callbackPath = '/oauth/callback';

/** An authorization request in flight: what the callback needs to check the answer and redeem the code. */
export interface PendingAuthorization {
  state: string;
  verifier: string;
  provider: string;
  appId: string;
  clientId: string;
  redirectUri: string;
  /** The provider's issuer as the browser reached it (RFC 9207 `iss` must equal it). */
  issuer: string;
  /** The token endpoint as the portal server reaches it. */
  tokenUrl: string;
  /** Where the developer goes back to: the API page and operation. */
  returnTo: string;
}

/** A token got by authorization code, kept in the session for Try it. */
export interface SessionToken {
  token: string;
  info: TryToken;
}

// Long enough to sign in and consent on a slow day; an answer after this finds nothing to match.
const pendingTtlMs = 10 * 60_000;
const pendingKey = 'oauth-pending';
const tokenKey = (provider: string, appId: string) => `oauth-token|${provider}|${appId}`;

/** A PKCE pair (RFC 7636 §4.1, §4.2): 32 random bytes as the verifier, its SHA-256 as the S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A fresh `state` (RFC 6749 §10.12: non-guessable, bound to the session). */
export function newState(): string {
  return randomBytes(32).toString('base64url');
}

/** The authorize endpoint URL for a pending request. */
export function authorizeUrl(
  authorizeEndpoint: string,
  pending: PendingAuthorization,
  challenge: string,
  scope: string,
): string {
  const url = new URL(authorizeEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: pending.clientId,
    redirect_uri: pending.redirectUri,
    scope,
    state: pending.state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
}

/** Keeps the request in flight (one per session: a newer one replaces it). */
export function rememberPending(deps: PortalDeps, session: Session, pending: PendingAuthorization): Promise<void> {
  return deps.services.sessions.putValue(session, pendingKey, JSON.stringify(pending), pendingTtlMs);
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The request in flight whose `state` the callback presents, removed from the session as it
 * matches (a code is redeemed once). A wrong or missing state leaves it in place and answers
 * undefined: a forged callback neither redeems anything nor spoils the developer's own sign-in.
 */
export async function takePending(
  deps: PortalDeps,
  session: Session,
  state: string | undefined,
): Promise<PendingAuthorization | undefined> {
  const stored = await deps.services.sessions.readValue(session, pendingKey);
  if (stored === undefined || state === undefined) return undefined;
  const pending = JSON.parse(stored) as PendingAuthorization;
  if (!sameText(pending.state, state)) return undefined;
  await deps.services.sessions.takeValue(session, pendingKey);
  return pending;
}

/** Keeps a token for Try it until it expires (or the session ends). */
export function keepToken(
  deps: PortalDeps,
  session: Session,
  provider: string,
  appId: string,
  token: SessionToken,
): Promise<void> {
  const ttlMs = Math.max(1, token.info.expiresIn) * 1000;
  return deps.services.sessions.putValue(session, tokenKey(provider, appId), JSON.stringify(token), ttlMs);
}

/** The token the developer got for this provider and app, if it has not expired. */
export async function sessionToken(
  deps: PortalDeps,
  session: Session,
  provider: string,
  appId: string,
): Promise<SessionToken | undefined> {
  const stored = await deps.services.sessions.readValue(session, tokenKey(provider, appId));
  return stored === undefined ? undefined : (JSON.parse(stored) as SessionToken);
}

/**
 * Redeems a code at the token endpoint (RFC 6749 §4.1.3) as a public client: the app's client
 * id, the exact redirect URI and the PKCE verifier, no secret (the portal does not have it).
 */
export function redeemCode(pending: PendingAuthorization, code: string, timeoutMs: number): Promise<TokenOutcome> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: pending.redirectUri,
    client_id: pending.clientId,
    code_verifier: pending.verifier,
  });
  return requestToken(pending.tokenUrl, form, {}, timeoutMs, 'authorization code');
}
