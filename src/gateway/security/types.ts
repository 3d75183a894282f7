/**
 * The security phase's shapes: what a scheme module sees of the request, what it proves about
 * the caller, and the caller the phase returns. Everything a scheme reads comes from the
 * snapshot: no scheme touches the database while a request is answered.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CredentialInfo, SubscriptionInfo } from '../snapshot.ts';

/** The parts of a request credentials are read from. */
export interface SecurityRequest {
  headers: IncomingHttpHeaders;
  query: URLSearchParams | undefined;
}

/** What the snapshot tells the security phase: credentials by client id, subscriptions by app. */
export interface CallerDirectory {
  credentials: ReadonlyMap<string, CredentialInfo>;
  subscriptionFor(appId: string): SubscriptionInfo | undefined;
  /** Revoked native access token ids and grant ids (the snapshot's set). */
  revoked?: ReadonlySet<string>;
}

/** What the schemes of one requirement have proved so far (they run in order, client id first). */
export interface Proof {
  clientId?: string;
  credential?: CredentialInfo;
  /**
   * A client secret matched the credential, or the client's own provider vouched for it
   * (a token issued to the client id): the caller owns the client id.
   */
  secretVerified: boolean;
  /** Scopes granted to the bearer token (oauth2). */
  scopes?: readonly string[];
  /** What the token's provider said about it (introspection answer), for the assembly. */
  claims?: Readonly<Record<string, unknown>>;
  /** The scopes the requirement asked for and the token lacks (403 insufficient_scope). */
  missingScopes?: readonly string[];
  /** The user a basic scheme's registry authenticated. */
  user?: string;
}

/**
 * Why a scheme did not hold: its credential is absent, or present and wrong; `forbidden` =
 * valid but not enough (RFC 6750 insufficient_scope); `unavailable` = the scheme's authority
 * (a user registry, an introspection endpoint) could not answer, so nothing is proved (fail
 * closed, 503).
 */
export type SchemeFailure = 'missing' | 'rejected' | 'forbidden' | 'unavailable';

/**
 * One security scheme as the gateway enforces it, compiled once per operation. Basic, OAuth 2
 * and JWT schemes implement the same interface (issue 13).
 */
export interface SchemeEnforcer {
  /** The scheme's name in the document, for logs. */
  readonly scheme: string;
  /**
   * Checks the request, adding what it proves to `proof`; a failure, never an exception. Only a
   * scheme that asks another server (a user registry, introspection) answers with a promise, and
   * it is asked only once every other scheme of its requirement held: an unauthenticated caller
   * cannot make the gateway call a registry for free.
   */
  check(
    request: SecurityRequest,
    proof: Proof,
    directory: CallerDirectory,
  ): SchemeFailure | undefined | Promise<SchemeFailure | undefined>;
  /** The scheme may answer with a promise: the operation's security phase then awaits. */
  readonly asynchronous?: boolean;
  /**
   * What kind of credential the scheme reads, for the error a failure makes: an app's client id or
   * secret (`app`), a user's name and password (`user`, 401 with its challenge, 503 when its registry
   * is down) or a bearer token (`bearer`, RFC 6750 challenges, 403 for a missing scope).
   */
  readonly kind: 'app' | 'user' | 'bearer';
  /** `WWW-Authenticate` value sent with a 401 when this scheme is one the caller could satisfy. */
  readonly challenge?: string;
}

/** Who calls: empty for an anonymous caller of an open operation. */
export interface Caller {
  /** The client id presented and found. */
  clientId?: string;
  /** The app the client id belongs to. */
  credential?: CredentialInfo;
  /** The app's active subscription to a product containing the API. */
  subscription?: SubscriptionInfo;
  /** Scopes granted to the caller's bearer token (oauth2). */
  scopes?: readonly string[];
  /** What the token's provider said about it (RFC 7662 introspection answer). */
  claims?: Readonly<Record<string, unknown>>;
  /** The user name a user registry authenticated (basic). */
  user?: string;
}

/** Reads a header or query credential: the first value when it is repeated. */
export function readCredential(
  request: SecurityRequest,
  where: 'header' | 'query',
  lowerName: string,
  name: string,
): string | undefined {
  if (where === 'header') {
    const value = request.headers[lowerName];
    return Array.isArray(value) ? value[0] : value;
  }
  return request.query?.get(name) ?? undefined;
}
