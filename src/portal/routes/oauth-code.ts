/**
 * Try it's authorization code grant with PKCE: `POST …/apis/{api}/{version}/authorize` starts it
 * for one of the developer's apps (CSRF-checked like every POST; state and verifier kept in the
 * session), and `GET /oauth/callback` takes the provider's answer, checks `state` (and RFC 9207
 * `iss`), redeems the code server-side and goes back to the operation with the token in the
 * session. The start answers a page with a link to the provider rather than a redirect: the
 * portal's Content-Security-Policy (`form-action 'self'`) lets a form lead only back here.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PorticoError } from '../../errors.ts';
import { formField, queryField } from '../../web/form.ts';
import { html } from '../../web/html.ts';
import { loadApiPage } from '../api-page-input.ts';
import { portalContext, signedIn } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { sendPortalPage } from '../layout.ts';
import {
  authorizeUrl,
  keepToken,
  newState,
  pkcePair,
  redeemCode,
  rememberPending,
  takePending,
} from '../oauth-code.ts';
import { issuerUrl } from '../oauth-view.ts';
import { nativeOAuthOf } from '../try-it-form.ts';

function refusal(reply: FastifyReply, context: PortalContext, status: number, message: string, back?: string) {
  return sendPortalPage(reply, context, {
    title: 'Authorization not completed',
    section: 'products',
    status,
    main: html`<h1>Authorization not completed</h1>
      <p class="lede" role="alert">${message}</p>
      ${back ? html`<p><a class="button" href="${back}">Back to the operation</a></p>` : ''}`,
  });
}

/** Registers the start of the grant and the callback. */
export function registerOAuthCodeRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.post('/products/:name/:version/apis/:apiName/:apiVersion/authorize', async (request, reply) => {
    const input = await loadApiPage(deps, request);
    const { context } = input;
    if (!signedIn(context)) return reply.redirect(`/sign-in?next=${encodeURIComponent(input.apiUrl)}`, 303);
    const operation = input.view.operations.find((o) => o.anchor === formField(request, 'operation'));
    if (!operation)
      throw new PorticoError('MGMT_NOT_FOUND', { kind: 'operation', id: formField(request, 'operation') });
    const back = `${input.apiUrl}#${operation.anchor}`;
    const native = nativeOAuthOf(input, operation);
    if (!native || !native.config.grants.includes('access_code'))
      return refusal(reply, context, 400, 'This operation takes no token from a provider that issues codes.', back);
    // Only the developer's own organization's apps (404 otherwise, like a missing one).
    const chosen = await deps.services.app(context.org.id, formField(request, 'app'));
    const credential = (await deps.services.listCredentials(chosen.id))[0];
    if (!credential) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'credential', id: chosen.id });
    const registered = input.apps.find((a) => a.app.id === chosen.id)?.redirectUris ?? [];
    if (!registered.includes(input.callbackUri)) {
      const message = `Add ${input.callbackUri} to the redirect URIs of ${chosen.title} (on the app's page), then try again.`;
      return refusal(reply, context, 400, message, `/apps/${encodeURIComponent(chosen.id)}#redirect-uris`);
    }
    if (!native.config.clients.includes('public')) {
      const message = `${native.config.title} accepts only confidential clients: the portal, which does not keep your client secret, cannot redeem a code for it. Use a client credentials token or paste a token.`;
      return refusal(reply, context, 400, message, back);
    }
    const offered = Object.keys(native.config.scopes);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const asked = ([] as unknown[]).concat(body.scope ?? []).map(String);
    const scope = asked.filter((s) => offered.includes(s)).join(' ');
    const { verifier, challenge } = pkcePair();
    const { orgName, catalogName } = context.catalog;
    const pending = {
      state: newState(),
      verifier,
      provider: native.config.name,
      appId: chosen.id,
      clientId: credential.client_id,
      redirectUri: input.callbackUri,
      issuer: native.issuer,
      tokenUrl: `${issuerUrl(deps.gatewayUrl, orgName, catalogName, native.config)}${native.config.tokenPath}`,
      returnTo: back,
    };
    await rememberPending(deps, context.session, pending);
    const target = authorizeUrl(`${native.issuer}${native.config.authorizePath}`, pending, challenge, scope);
    return sendPortalPage(reply, context, {
      title: 'Sign in to authorize',
      section: 'products',
      main: html`<h1>Sign in to ${native.config.title}</h1>
        <p class="lede">
          ${chosen.title} asks for ${scope === '' ? 'every scope of the provider' : html`scope <code>${scope}</code>`}.
          You sign in and consent on ${native.config.title}'s page, then come back to the operation.
        </p>
        <p><a class="button" id="authorize-link" href="${target}">Continue to ${native.config.title}</a></p>
        <p><a href="${back}">Cancel</a></p>`,
    });
  });

  app.get('/oauth/callback', async (request, reply) => {
    const context = portalContext(request);
    if (!signedIn(context)) return refusal(reply, context, 400, 'Sign in to the portal first, then start again.');
    const pending = await takePending(deps, context.session, queryField(request, 'state') || undefined);
    if (pending === undefined) {
      const message =
        'This answer does not belong to a sign-in this browser started (the state does not match, or it expired). Nothing was exchanged.';
      return refusal(reply, context, 400, message, '/products');
    }
    // RFC 9207 §2.4: an `iss` that is not the provider's is a mix-up; refuse it.
    const iss = queryField(request, 'iss');
    if (iss !== '' && iss !== pending.issuer)
      return refusal(reply, context, 400, `The answer came from ${iss}, not ${pending.issuer}.`, pending.returnTo);
    const error = queryField(request, 'error');
    if (error !== '') {
      const description = queryField(request, 'error_description');
      const message = `The provider answered ${error}${description ? `: ${description}` : ''}.`;
      return refusal(reply, context, 400, message, pending.returnTo);
    }
    const code = queryField(request, 'code');
    if (code === '') return refusal(reply, context, 400, 'The answer carries no code.', pending.returnTo);
    const outcome = await redeemCode(pending, code, deps.tryTimeoutMs);
    if ('error' in outcome) return refusal(reply, context, 400, outcome.error, pending.returnTo);
    await keepToken(deps, context.session, pending.provider, pending.appId, outcome);
    return reply.redirect(pending.returnTo, 303);
  });
}
