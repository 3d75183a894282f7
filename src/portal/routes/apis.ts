/**
 * API pages of a product, their OpenAPI downloads (only of products the visitor may see), and
 * Try it (relayed to the gateway for the developer's own apps only).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { apiPage } from '../api-page.ts';
import type { ApiPageInput } from '../api-page.ts';
import { loadApiPage } from '../api-page-input.ts';
import type { ApiParams } from '../api-page-input.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { formField, formFields } from '../../web/form.ts';
import { sendPortalPage } from '../layout.ts';
import { openApiText, publicOpenApi } from '../openapi-download.ts';
import { clientCredentialsToken, issuerUrl } from '../oauth-view.ts';
import type { TokenOutcome } from '../oauth-view.ts';
import { sessionToken } from '../oauth-code.ts';
import { chosenAlternative } from '../operation-security.ts';
import type { SupportedScheme } from '../../definitions/security-support.ts';
import { relayTryIt } from '../try-it.ts';
import type { TryResult } from '../try-it.ts';
import type { OAuthRequirement } from '../../web/openapi-view.ts';
import { setSecurityHeaders } from '../../web/page-shell.ts';

/** Registers the API page and its Try it endpoint. */
export function registerApiRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const { services } = deps;
  const pageInput = (request: FastifyRequest) => loadApiPage(deps, request);

  function send(reply: FastifyReply, input: ApiPageInput, status = 200): FastifyReply {
    return sendPortalPage(reply, input.context, {
      title: `${input.api.title} ${input.api.version}`,
      section: 'products',
      status,
      main: apiPage(input),
    });
  }

  app.get('/products/:name/:version/apis/:apiName/:apiVersion', async (request, reply) =>
    send(reply, await pageInput(request)),
  );

  for (const format of ['json', 'yaml'] as const) {
    app.get(`/products/:name/:version/apis/:apiName/:apiVersion/openapi.${format}`, async (request, reply) => {
      const context = portalContext(request);
      const params = request.params as ApiParams;
      // The same visibility as the page: a product the visitor may not see is 404, like a missing one.
      const product = await services.visibleProduct(context, params.name, params.version);
      const api = await services.visibleProductApi(context, product, params.apiName, params.apiVersion);
      const document = publicOpenApi(JSON.parse(api.document) as Record<string, unknown>, {
        publicUrl: deps.gatewayPublicUrl,
        orgName: context.catalog.orgName,
        catalogName: context.catalog.catalogName,
        basePath: api.base_path,
      });
      const file = `${api.name}-${api.version}`.replace(/[^A-Za-z0-9._-]/g, '_');
      setSecurityHeaders(reply);
      return reply
        .header(
          'content-type',
          format === 'json' ? 'application/json; charset=utf-8' : 'application/yaml; charset=utf-8',
        )
        .header('content-disposition', `attachment; filename="${file}.${format}"`)
        .header('cache-control', 'no-store')
        .send(openApiText(document, format));
    });
  }

  app.post('/products/:name/:version/apis/:apiName/:apiVersion/try', async (request, reply) => {
    const input = await pageInput(request);
    const { context } = input;
    const wantsJson = (request.headers.accept ?? '').includes('application/json');
    if (!signedIn(context)) {
      if (wantsJson)
        return reply.status(401).send({
          status: 0,
          statusText: '',
          headers: [],
          body: '',
          timeMs: 0,
          error: 'Sign in to try operations.',
        });
      return reply.redirect(`/sign-in?next=${encodeURIComponent(input.apiUrl)}`, 303);
    }
    const operation = input.view.operations.find((o) => o.anchor === formField(request, 'operation'));
    if (!operation)
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'operation', id: formField(request, 'operation') });
    // Ownership is checked here, on the server: only the developer's own org's apps can be used.
    const chosen = await services.app(context.org.id, formField(request, 'app'));
    const credential = (await services.listCredentials(chosen.id))[0];
    if (!credential) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'credential', id: chosen.id });
    const values = formFields(request);
    const security = input.security.get(operation.anchor)!;
    const schemes = chosenAlternative(security, values.alternative);
    const refused = (error: string, status = 0): TryResult => ({
      status,
      statusText: '',
      headers: [],
      body: '',
      timeMs: 0,
      error,
    });
    if (security.refused !== undefined)
      return answer(
        request,
        reply,
        input,
        refused(`The gateway refuses this operation: ${security.refused}`),
        operation.anchor,
        values,
      );
    const oauth = schemes.find((s) => s.role === 'oauth2-native' || s.role === 'oauth2-introspect');
    const token = oauth ? await tryItToken(input, oauth, chosen.id, credential.client_id, values) : undefined;
    if (token !== undefined && 'error' in token) {
      return answer(request, reply, input, refused(token.error, token.status), operation.anchor, values);
    }
    const basic = schemes.some((s) => s.role === 'basic')
      ? { username: values.username ?? '', password: values.password ?? '' }
      : undefined;
    const outcome = await relayTryIt({
      gatewayUrl: deps.gatewayUrl,
      orgName: context.catalog.orgName,
      catalogName: context.catalog.catalogName,
      basePath: input.api.base_path,
      operation,
      values,
      body: values.body,
      schemes,
      clientId: credential.client_id,
      clientSecret: values.clientSecret || undefined,
      basic,
      bearer: token?.token,
      timeoutMs: deps.tryTimeoutMs,
    });
    return answer(request, reply, input, { ...outcome, token: token?.info }, operation.anchor, values);
  });

  /**
   * The bearer token for an OAuth scheme, from the source the form chose: the one this session
   * got by authorization code, a client credentials token (native providers), or a pasted one.
   * Without a choice (a script posting JSON), a typed secret means client credentials.
   */
  async function tryItToken(
    input: ApiPageInput,
    scheme: SupportedScheme,
    appId: string,
    clientId: string,
    values: Record<string, string>,
  ): Promise<TokenOutcome | { token: string; info?: undefined }> {
    const source = values.tokenSource ?? (values.clientSecret ? 'client-credentials' : 'session');
    if (source === 'pasted') {
      const pasted = (values.bearer ?? '').trim();
      if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(pasted))
        return { status: 0, error: 'Paste an access token (RFC 6750 b64token characters only)' };
      return { token: pasted };
    }
    if (scheme.role !== 'oauth2-native')
      return { status: 0, error: 'This operation takes a token of a third-party provider: paste one' };
    const requirement = { scheme: scheme.scheme, provider: scheme.provider!, scopes: [...(scheme.scopes ?? [])] };
    if (source === 'client-credentials') return tryToken(input, requirement, clientId, values.clientSecret ?? '');
    const kept = signedIn(input.context)
      ? await sessionToken(deps, input.context.session, requirement.provider, appId)
      : undefined;
    if (kept === undefined)
      return {
        status: 0,
        error: 'No token from signing in for this app (or it expired): use Sign in and authorize first',
      };
    return kept;
  }

  /** A client credentials token for Try it, from the gateway this process reaches (not the public address). */
  function tryToken(input: ApiPageInput, requirement: OAuthRequirement, clientId: string, clientSecret: string) {
    const provider = input.oauthProviders.get(requirement.provider);
    if (provider === undefined)
      return Promise.resolve({
        status: 0,
        error: `OAuth provider ${requirement.provider} is not offered in this catalog`,
      });
    if (!provider.config.grants.includes('application')) {
      return Promise.resolve({
        status: 0,
        error: `OAuth provider ${provider.config.title} does not issue client credentials tokens`,
      });
    }
    const { orgName, catalogName } = input.context.catalog;
    const tokenUrl = `${issuerUrl(deps.gatewayUrl, orgName, catalogName, provider.config)}${provider.config.tokenPath}`;
    return clientCredentialsToken({
      tokenUrl,
      clientId,
      clientSecret,
      scopes: requirement.scopes,
      timeoutMs: deps.tryTimeoutMs,
    });
  }

  /** JSON for the page's script, else the page with the answer under its operation (the secret not echoed). */
  function answer(
    request: FastifyRequest,
    reply: FastifyReply,
    input: ApiPageInput,
    outcome: TryResult,
    anchor: string,
    values: Record<string, string>,
  ) {
    if ((request.headers.accept ?? '').includes('application/json'))
      return reply.header('cache-control', 'no-store').send(outcome);
    delete values.clientSecret;
    delete values.password;
    delete values.bearer;
    delete values._csrf;
    return send(reply, { ...input, result: { anchor, outcome, values } });
  }
}
