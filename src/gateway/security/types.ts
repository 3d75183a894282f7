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
}

/** What the schemes of one requirement have proved so far (they run in order, client id first). */
export interface Proof {
  clientId?: string;
  credential?: CredentialInfo;
  /** A client secret matched the credential: the caller owns the client id. */
  secretVerified: boolean;
  /** The user a basic scheme's registry authenticated. */
  user?: string;
}

/**
 * Why a scheme did not hold: its credential is absent, or present and wrong, or the registry
 * that judges it could not answer (the caller is refused with a 503: fail closed).
 */
export type SchemeFailure = 'missing' | 'rejected' | 'unavailable';

/**
 * One security scheme as the gateway enforces it, compiled once per operation. Basic, OAuth 2
 * and JWT schemes implement the same interface (issue 13).
 */
export interface SchemeEnforcer {
  /** The scheme's name in the document, for logs. */
  readonly scheme: string;
  /** Checks the request, adding what it proves to `proof`; a failure, never an exception. */
  check(request: SecurityRequest, proof: Proof, directory: CallerDirectory): SchemeFailure | undefined;
  /**
   * The part that asks a user registry (basic): run only once every `check` of the requirement
   * held, so an unauthenticated caller cannot make the gateway call a registry for free.
   */
  verify?(request: SecurityRequest, proof: Proof): Promise<SchemeFailure | undefined>;
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
