/**
 * Cookie sessions for the portal and the console. The cookie holds a random token; the store
 * keeps only its hash (`sessions`, kind `portal` or `provider`) with an expiry and the
 * session's CSRF token (synchronizer token pattern, OWASP CSRF cheat sheet). Visitors who are
 * not signed in get a pre-session (kind `pre-portal`/`pre-provider`) in the store too, whose
 * CSRF token their sign-in and sign-up forms must echo (login CSRF). Both tokens are issued by
 * the server: a cookie the server did not issue is never a session or a pre-session, so a
 * client cannot choose the token it will be asked for (issue 12).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session, SessionKind } from '../store/schema.ts';

/** The slice of the session service a web session uses (src/services/sessions.ts). */
export interface SessionStore {
  create(input: {
    kind: SessionKind;
    userId: string;
    ttlMs: number;
  }): Promise<{ token: string; csrfToken: string; session: Session }>;
  find(token: string, kinds: SessionKind[]): Promise<Session | undefined>;
  delete(token: string): Promise<void>;
}

export interface WebSessionOptions {
  store: SessionStore;
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

// A sign-in form left open longer than this answers 403 "reload the page"; expired rows go with housekeeping.
const preSessionTtlMs = 2 * 3600 * 1000;

function preSessionCookie(options: WebSessionOptions): string {
  return `${options.cookieName}_pre`;
}

/** Reads the session cookie; without a live session, the pre-session (a new one when the cookie names none). */
export async function loadWebSession(
  request: FastifyRequest,
  reply: FastifyReply,
  options: WebSessionOptions,
): Promise<WebSessionState> {
  const token = request.cookies[options.cookieName];
  const session = token ? await options.store.find(token, [options.kind]) : undefined;
  if (session) return { session, csrfToken: session.csrf_token };
  const preKind = `pre-${options.kind}` as const;
  const pre = request.cookies[preSessionCookie(options)];
  const preSession = pre ? await options.store.find(pre, [preKind]) : undefined;
  if (preSession) return { csrfToken: preSession.csrf_token };
  const created = await options.store.create({ kind: preKind, userId: '', ttlMs: preSessionTtlMs });
  reply.setCookie(preSessionCookie(options), created.token, cookieOptions(request, options));
  return { csrfToken: created.csrfToken };
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
  for (const name of [options.cookieName, preSessionCookie(options)]) {
    const previous = request.cookies[name];
    if (previous) await options.store.delete(previous);
  }
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
