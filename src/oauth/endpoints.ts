/**
 * The native OAuth providers' endpoints on the gateway: `/<org>/<catalog>/<basePath>` followed by
 * the provider's authorize and token paths, `/oauth2/introspect`, `/oauth2/revoke`,
 * `/oauth2/jwks` and `/.well-known/oauth-authorization-server`, and the RFC 8414 §3 form
 * `/.well-known/oauth-authorization-server/<org>/<catalog>/<basePath>`. The gateway asks
 * {@link OAuthEndpoints.route} before routing to APIs; a catalog without providers costs one
 * map lookup.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { clientAddress } from '../gateway/forwarded.ts';
import type { Snapshot } from '../gateway/snapshot.ts';
import type { Store } from '../store/store.ts';
import type { ChangeKind } from '../store/changes.ts';
import { SignInLimiter } from '../web/sign-in-limiter.ts';
import { authorizeEndpoint } from './authorize.ts';
import type { CompiledProvider } from './compile.ts';
import { OAuthError, requestOrigin, sendError } from './http.ts';
import type { EndpointContext } from './http.ts';
import { introspectEndpoint, revokeEndpoint } from './introspect.ts';
import { endpointPaths, jwksEndpoint, metadataEndpoint } from './metadata.ts';
import { tokenEndpoint } from './token.ts';

type Endpoint = 'authorize' | 'token' | 'introspect' | 'revoke' | 'jwks' | 'metadata';

export interface OAuthRoute {
  provider: CompiledProvider;
  endpoint: Endpoint;
  /** The request path (the authorize form posts back to it). */
  path: string;
}

export interface OAuthEndpointsOptions {
  store: Store;
  logger: Logger;
  /** Records a change (a revocation) so every node reloads, this one before the answer. */
  changed(kind: ChangeKind): Promise<void>;
  /** Peers allowed to name the client in `X-Forwarded-For` (PORTICO_TRUSTED_PROXIES). */
  trusted?: (address: string) => boolean;
  /** Default: this process's own, with the portal's limits (docs/oauth.md). */
  signInLimiter?: SignInLimiter;
}

const wellKnown = endpointPaths.metadata;

function endpointOf(provider: CompiledProvider, sub: string): Endpoint | undefined {
  const config = provider.config;
  if (sub === config.tokenPath) return 'token';
  if (sub === config.authorizePath) return 'authorize';
  if (sub === endpointPaths.introspect) return 'introspect';
  if (sub === endpointPaths.revoke) return 'revoke';
  if (sub === endpointPaths.jwks) return 'jwks';
  if (sub === wellKnown) return 'metadata';
  return undefined;
}

export class OAuthEndpoints {
  private readonly signInLimiter: SignInLimiter;

  constructor(private readonly options: OAuthEndpointsOptions) {
    this.signInLimiter = options.signInLimiter ?? new SignInLimiter();
  }

  /** The provider endpoint `pathname` names in the snapshot, if any. */
  route(snapshot: Snapshot, pathname: string): OAuthRoute | undefined {
    if (snapshot.oauth.size === 0) return undefined;
    if (pathname.startsWith(`${wellKnown}/`)) return this.wellKnownRoute(snapshot, pathname);
    const second = pathname.indexOf('/', 1);
    const third = pathname.indexOf('/', second + 1);
    if (third < 0) return undefined;
    const catalog = snapshot.oauth.get(pathname.slice(1, third));
    if (catalog === undefined) return undefined;
    const path = pathname.slice(third);
    for (const [basePath, provider] of catalog.byBasePath) {
      if (!path.startsWith(`${basePath}/`)) continue;
      const endpoint = endpointOf(provider, path.slice(basePath.length));
      if (endpoint !== undefined) return { provider, endpoint, path: pathname };
    }
    return undefined;
  }

  private wellKnownRoute(snapshot: Snapshot, pathname: string): OAuthRoute | undefined {
    const issuerPath = pathname.slice(wellKnown.length);
    const second = issuerPath.indexOf('/', 1);
    const third = issuerPath.indexOf('/', second + 1);
    if (second < 0 || third < 0) return undefined;
    const catalog = snapshot.oauth.get(issuerPath.slice(1, third));
    const provider = catalog?.byBasePath.get(issuerPath.slice(third));
    return provider === undefined ? undefined : { provider, endpoint: 'metadata', path: pathname };
  }

  /** Answers a request `route` matched; RFC 6749 §5.2 errors, never the gateway's envelope. */
  async serve(
    route: OAuthRoute,
    req: IncomingMessage,
    res: ServerResponse,
    snapshot: Snapshot,
    search: string,
  ): Promise<void> {
    try {
      const origin = requestOrigin(req);
      if (origin === undefined) throw new OAuthError('invalid_request', 'the Host header is missing or malformed');
      const context: EndpointContext = {
        store: this.options.store,
        provider: route.provider,
        credentials: snapshot.credentials,
        revoked: snapshot.revoked,
        origin,
        changed: this.options.changed,
        signInLimiter: this.signInLimiter,
        address: clientAddress(req, this.options.trusted ?? (() => false)),
      };
      await this.dispatch(route, req, res, context, search);
    } catch (error) {
      if (error instanceof OAuthError) return sendError(res, error);
      this.options.logger.error(
        { err: error, provider: route.provider.config.name, endpoint: route.endpoint },
        'OAuth endpoint failed',
      );
      sendError(res, new OAuthError('server_error', 'the request could not be completed', 500));
    }
  }

  private dispatch(
    route: OAuthRoute,
    req: IncomingMessage,
    res: ServerResponse,
    context: EndpointContext,
    search: string,
  ) {
    const readOnly = req.method === 'GET' || req.method === 'HEAD';
    switch (route.endpoint) {
      case 'token':
        return tokenEndpoint(req, res, context);
      case 'authorize':
        return authorizeEndpoint(req, res, context, route.path, new URLSearchParams(search.slice(1)));
      case 'introspect':
        return introspectEndpoint(req, res, context);
      case 'revoke':
        return revokeEndpoint(req, res, context);
      case 'jwks':
        if (!readOnly) throw new OAuthError('invalid_request', 'use GET', 405, { allow: 'GET' });
        return jwksEndpoint(res, context);
      case 'metadata':
        if (!readOnly) throw new OAuthError('invalid_request', 'use GET', 405, { allow: 'GET' });
        return metadataEndpoint(res, context);
    }
  }
}
