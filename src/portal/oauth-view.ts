/**
 * What an API page says about an operation secured by a native OAuth provider (its endpoints,
 * grants and scopes), and Try it's token: the portal server asks the provider's token endpoint
 * for a client credentials token with the app's client id and the secret the developer typed,
 * uses it for the one call and forgets both. The token itself is never shown or stored; its
 * scopes and expiry are.
 */
import { endpointPaths } from '../oauth/metadata.ts';
import type { ProviderConfig } from '../oauth/provider-config.ts';
import { table } from '../web/components.ts';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import type { OAuthRequirement } from '../web/openapi-view.ts';

const grantWords: Record<string, string> = {
  application: 'Client credentials (application)',
  access_code: 'Authorization code with PKCE (access_code)',
  password: 'Resource owner password (password)',
};

/** The provider's issuer below a gateway address: `<gateway>/<org>/<catalog><basePath>`. */
export function issuerUrl(gateway: string, orgName: string, catalogName: string, config: ProviderConfig): string {
  return `${gateway.replace(/\/$/, '')}/${orgName}/${catalogName}${config.basePath}`;
}

/** The section under an operation: provider, scopes the operation needs, endpoints, grants, scopes offered. */
export function oauthPanel(
  requirement: OAuthRequirement,
  config: ProviderConfig | undefined,
  issuer: string | undefined,
): SafeHtml {
  if (config === undefined || issuer === undefined) {
    return html`<h3>OAuth</h3>
      <p>
        Needs an access token from OAuth provider <code>${requirement.provider}</code>, which this catalog does not
        offer at the moment.
      </p>`;
  }
  const endpoints: Array<[string, string]> = [['Token', `${issuer}${config.tokenPath}`]];
  if (config.grants.includes('access_code')) endpoints.push(['Authorize', `${issuer}${config.authorizePath}`]);
  endpoints.push(
    ['Metadata (RFC 8414)', `${issuer}${endpointPaths.metadata}`],
    ['Introspection', `${issuer}${endpointPaths.introspect}`],
  );
  endpoints.push(['Revocation', `${issuer}${endpointPaths.revoke}`], ['JWKS', `${issuer}${endpointPaths.jwks}`]);
  const needed =
    requirement.scopes.length === 0
      ? 'no particular scope'
      : html`${requirement.scopes.map((s) => html`<code>${s}</code> `)}`;
  const scopeRows = Object.entries(config.scopes).map(([name, description]) => [
    html`<code>${name}</code>`,
    description,
  ]);
  return html`<h3>OAuth</h3>
    <p>
      Send <code>Authorization: Bearer &lt;access token&gt;</code> from OAuth provider <strong>${config.title}</strong>;
      this operation needs ${needed}. Your app's client id and secret are its OAuth client.
    </p>
    <dl class="facts">
      ${endpoints.map(
        ([label, url]) =>
          html`<dt>${label}</dt>
            <dd><code class="url">${url}</code></dd>`,
      )}
      <dt>Grants</dt>
      <dd>${config.grants.map((g) => grantWords[g] ?? g).join(', ')}</dd>
    </dl>
    ${table(`Scopes of ${config.title}`, ['Scope', 'Description'], scopeRows)}`;
}

/** What Try it shows about the token it used. */
export interface TryToken {
  /** How it was got: `client credentials`, `authorization code`. */
  grant: string;
  scope: string;
  expiresIn: number;
  /** ISO time the token expires. */
  expiresAt: string;
}

export type TokenOutcome = { token: string; info: TryToken } | { error: string; status: number };

/** A client credentials token (RFC 6749 §4.4) for the operation's scopes, `client_secret_basic`. */
export function clientCredentialsToken(input: {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scopes: readonly string[];
  timeoutMs: number;
}): Promise<TokenOutcome> {
  const basic = Buffer.from(`${encodeURIComponent(input.clientId)}:${encodeURIComponent(input.clientSecret)}`).toString(
    'base64',
  );
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (input.scopes.length > 0) form.set('scope', input.scopes.join(' '));
  return requestToken(input.tokenUrl, form, { authorization: `Basic ${basic}` }, input.timeoutMs, 'client credentials');
}

/**
 * One token request (RFC 6749 §3.2) from the portal's try-it: the form posted, redirects not
 * followed, the answer's token or the endpoint's `error` / `error_description` as the reason.
 */
export async function requestToken(
  tokenUrl: string,
  form: URLSearchParams,
  headers: Record<string, string>,
  timeoutMs: number,
  grant: string,
): Promise<TokenOutcome> {
  try {
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof answer.access_token !== 'string') {
      const reason =
        [answer.error, answer.error_description].filter((v) => typeof v === 'string').join(': ') || response.statusText;
      return { status: response.status, error: `The token endpoint refused: ${reason}` };
    }
    const expiresIn = Number(answer.expires_in ?? 0);
    const info: TryToken = {
      grant,
      scope: String(answer.scope ?? ''),
      expiresIn,
      expiresAt: new Date(Date.now() + expiresIn * 1000).toISOString(),
    };
    return { token: answer.access_token, info };
  } catch (error) {
    return { status: 0, error: `No token: the token endpoint could not be reached (${(error as Error).message})` };
  }
}
