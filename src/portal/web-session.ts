/**
 * Cookie sessions for the portal and the console. The cookie holds a random token; the store
 * keeps only its hash (`sessions`, kind `portal` or `provider`) with an expiry and the
 * session's CSRF token (synchronizer token pattern, OWASP CSRF cheat sheet). Visitors who are
 * not signed in get a random pre-session cookie whose value is the token their sign-in and
 * sign-up forms must echo, so those forms are protected too (login CSRF).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session, SessionKind } from '../store/schema.ts';
import { createSession, deleteSession, findSession } from '../store/sessions.ts';
import type { Db } from '../store/store.ts';

export interface WebSessionOptions {
  db: Db;
  kind: Extract<SessionKind, 'portal' | 'provider'>;
  /** Cookie name of the session; the pre-session cookie is `${cookieName}_pre`. */
  cookieName: string;
  cookiePath: string;
  ttlMs: number;
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

/** Reads the session cookie; without a live session, issues (or reuses) the pre-session token. */
export async function loadWebSession(request: FastifyRequest, reply: FastifyReply, options: WebSessionOptions): Promise<WebSessionState> {
  const token = request.cookies[options.cookieName];
  const session = token ? await findSession(options.db, token, [options.kind]) : undefined;
  if (session) return { session, csrfToken: session.csrf_token };
  const preName = `${options.cookieName}_pre`;
  let pre = request.cookies[preName];
  if (!pre || !/^[A-Za-z0-9_-]{32,64}$/.test(pre)) {
    pre = randomBytes(32).toString('base64url');
    reply.setCookie(preName, pre, cookieOptions(request, options));
  }
  return { csrfToken: pre };
}

/** Starts a session for `userId` and sets its cookie; returns the new state. */
export async function startWebSession(request: FastifyRequest, reply: FastifyReply, options: WebSessionOptions, userId: string): Promise<WebSessionState> {
  const previous = request.cookies[options.cookieName];
  if (previous) await deleteSession(options.db, previous);
  const created = await createSession(options.db, { kind: options.kind, userId, ttlMs: options.ttlMs });
  reply.setCookie(options.cookieName, created.token, cookieOptions(request, options, Math.floor(options.ttlMs / 1000)));
  return { session: created.session, csrfToken: created.csrfToken };
}

/** Deletes the session row (so the cookie no longer works anywhere) and clears the cookie. */
export async function endWebSession(request: FastifyRequest, reply: FastifyReply, options: WebSessionOptions): Promise<void> {
  const token = request.cookies[options.cookieName];
  if (token) await deleteSession(options.db, token);
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
