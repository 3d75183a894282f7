/**
 * Cookie sessions for the portal and the console. The cookie holds a random token; the store
 * keeps only its hash (`sessions`, kind `portal` or `provider`) with an expiry, its last recorded
 * activity and the session's CSRF token (synchronizer token pattern, OWASP CSRF cheat sheet). A
 * session ends at its expiry, at sign-out, or after `idleMs` without a request.
 *
 * Visitors who are not signed in get a pre-session instead (web/pre-session.ts): a cookie the
 * server signs, from which the CSRF token their sign-in and sign-up forms must echo is derived
 * (login CSRF). Nothing is stored for it, so anonymous traffic writes nothing. Both tokens are
 * issued by the server: a cookie the server did not issue is never a session or a pre-session,
 * so a client cannot choose the token it will be asked for (issue 12).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session, SessionKind } from '../store/schema.ts';
import { issuePreSession, preSessionCsrfToken, verifyPreSession } from './pre-session.ts';

/** The slice of the session service a web session uses (src/services/sessions.ts). */
export interface SessionStore {
  create(input: {
    kind: SessionKind;
    userId: string;
    ttlMs: number;
  }): Promise<{ token: string; csrfToken: string; session: Session }>;
  find(token: string, kinds: SessionKind[], idleMs?: number): Promise<Session | undefined>;
  delete(token: string): Promise<void>;
  /** The installation's key that signs pre-session cookies (the same on every node). */
  preSessionKey(): Promise<Buffer>;
}

/** PORTICO_SESSION_IDLE_MINUTES' default. */
export const defaultSessionIdleMs = 60 * 60_000;

export interface WebSessionOptions {
  store: SessionStore;
  kind: Extract<SessionKind, 'portal' | 'provider'>;
  /** Cookie name of the session; the pre-session cookie is `${cookieName}_pre`. */
  cookieName: string;
  cookiePath: string;
  ttlMs: number;
  /** A session without a request for this long ends (default 60 minutes). */
  idleMs?: number;
}

/** What a request carries: the live session (if any) and the CSRF token its forms must echo. */
export interface WebSessionState {
  session?: Session;
  csrfToken: string;
}

function cookieOptions(request: FastifyRequest, options: WebSessionOptions, maxAgeSeconds?: number) {
  return {
    path: options.cookiePath,
    httpOnly: true,
    sameSite: 'lax' as const,
    // Secure only behind https (request.protocol honours X-Forwarded-Proto when trustProxy is set).
    secure: request.protocol === 'https',
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

function preSessionCookie(options: WebSessionOptions): string {
  return `${options.cookieName}_pre`;
}

/** Reads the session cookie; without a live session, the pre-session (a new cookie when the request has no valid one). */
export async function loadWebSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WebSessionOptions,
): Promise<WebSessionState> {
  const token = request.cookies[options.cookieName];
  const idleMs = options.idleMs ?? defaultSessionIdleMs;
  const session = token ? await options.store.find(token, [options.kind], idleMs) : undefined;
  if (session) return { session, csrfToken: session.csrf_token };
  const preKind = `pre-${options.kind}` as const;
  const key = await options.store.preSessionKey();
  const presented = request.cookies[preSessionCookie(options)];
  let nonce = presented ? verifyPreSession(key, preKind, presented) : undefined;
  if (nonce === undefined) {
    const issued = issuePreSession(key, preKind);
    reply.setCookie(preSessionCookie(options), issued.cookie, cookieOptions(request, options));
    nonce = issued.nonce;
  }
  return { csrfToken: preSessionCsrfToken(key, preKind, nonce) };
}

/**
 * Starts a session for `userId` and sets its cookie (ending the pre-session); returns the new state.
 *
 * `stillGranted` is asked once the session row exists; when it answers false the row is deleted
 * again, the cookies stay as they were and the answer is undefined. A password reset ends the
 * sessions that exist when it runs, so a sign-in that checked the old password just before the
 * reset, and stores its session just after it, would otherwise outlive the reset.
 */
export async function startWebSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WebSessionOptions,
  userId: string,
  stillGranted?: () => Promise<boolean>,
): Promise<WebSessionState | undefined> {
  const created = await options.store.create({ kind: options.kind, userId, ttlMs: options.ttlMs });
  if (stillGranted && !(await stillGranted())) {
    await options.store.delete(created.token);
    return undefined;
  }
  const previous = request.cookies[options.cookieName];
  if (previous) await options.store.delete(previous);
  reply.clearCookie(preSessionCookie(options), cookieOptions(request, options));
  reply.setCookie(options.cookieName, created.token, cookieOptions(request, options, Math.floor(options.ttlMs / 1000)));
  return { session: created.session, csrfToken: created.csrfToken };
}

/** Deletes the session row (so the cookie no longer works anywhere) and clears the cookie. */
export async function endWebSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WebSessionOptions,
): Promise<void> {
  const token = request.cookies[options.cookieName];
  if (token) await options.store.delete(token);
  reply.clearCookie(options.cookieName, cookieOptions(request, options));
}

/** The CSRF token a request presents: the `X-CSRF-Token` header, else the form's `_csrf` field. */
export function presentedCsrfToken(request: FastifyRequest): string | undefined {
  const header = request.headers['x-csrf-token'];
  if (typeof header === 'string' && header !== '') return header;
  const body = request.body as Record<string, unknown> | undefined;
  return body && typeof body._csrf === 'string' ? body._csrf : undefined;
}

/** Constant-time comparison of the presented token with the expected one. */
export function csrfTokenMatches(presented: string | undefined, expected: string): boolean {
  if (!presented || !expected) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether a method changes state (and so needs a CSRF token). */
export function isStateChanging(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method);
}
