/**
 * The Try it form under an operation: it asks for exactly the credentials the operation's
 * security needs (an alternative to choose when there are several), and for a native OAuth
 * provider offers three ways to a token: the one got by signing in (authorization code with
 * PKCE, a separate form that leaves for the provider's consent page), client credentials with
 * the pasted secret, or a pasted token.
 */
import type { SupportedScheme } from '../definitions/security-support.ts';
import type { ProviderConfig } from '../oauth/provider-config.ts';
import { csrfField } from '../web/components.ts';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import type { OperationView, ParameterView } from '../web/openapi-view.ts';
import type { ApiPageInput } from './api-page.ts';
import { schemeWords } from './operation-security.ts';
import type { TryResult } from './try-it.ts';

function parameterInput(operation: OperationView, parameter: ParameterView, values: Record<string, string>): SafeHtml {
  const key = `param.${parameter.in}.${parameter.name}`;
  const id = `${operation.anchor}-${parameter.in}-${parameter.name}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const value = values[key] ?? (parameter.example !== undefined ? String(parameter.example) : '');
  return html`<div class="field">
    <label for="${id}"
      >${parameter.name} <span class="hint">(${parameter.in}${parameter.required ? ', required' : ''})</span></label
    >
    <input
      type="text"
      id="${id}"
      name="${key}"
      value="${value}"
      ${parameter.required ? html` required` : ''}${parameter.description ? html` aria-describedby="${id}-hint"` : ''}
    />
    ${parameter.description ? html`<p class="hint" id="${id}-hint">${parameter.description}</p>` : ''}
  </div>`;
}

/** A Try it answer rendered on the server (the script renders the same shape in place). */
export function tryResultHtml(outcome: TryResult): SafeHtml {
  const ok = outcome.status >= 200 && outcome.status < 400;
  const line = outcome.error
    ? `Code: ${outcome.status} ${outcome.error}`
    : `Code: ${outcome.status} ${outcome.statusText} — ${outcome.timeMs} ms`;
  const token = outcome.token;
  return html`${token ? html`<p class="tryit-token">Access token (${token.grant}): scope <code>${token.scope || '(none)'}</code>, expires in ${token.expiresIn} s (${token.expiresAt})</p>` : ''}
    <p class="status-line ${ok ? 'ok' : 'bad'}">${line}</p>
    ${
      outcome.headers.length > 0
        ? html`<h4>Response headers</h4>
            <pre tabindex="0">${outcome.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}</pre>`
        : ''
    }
    ${
      outcome.body
        ? html`<h4>Response body</h4>
            <pre class="tryit-body" tabindex="0">${outcome.body}</pre>`
        : ''
    }`;
}

function textField(id: string, label: string, name: string, type: 'text' | 'password', hint: string): SafeHtml {
  return html`<div class="field">
    <label for="${id}">${label}</label
    ><input type="${type}" id="${id}" name="${name}" autocomplete="off" aria-describedby="${id}-hint" />
    <p class="hint" id="${id}-hint">${hint}</p>
  </div>`;
}

function radio(name: string, id: string, value: string, label: unknown, checked: boolean): SafeHtml {
  return html`<div class="choice">
    <input type="radio" id="${id}" name="${name}" value="${value}" ${checked ? html`checked` : ''} /><label for="${id}"
      >${label}</label
    >
  </div>`;
}

function alternativeChoice(input: ApiPageInput, operation: OperationView, prefix: string): SafeHtml {
  const security = input.security.get(operation.anchor)!;
  const options = security.alternatives.map((schemes) =>
    schemes.map((s) => schemeWords(s, input.document, input.names)).join(' and '),
  );
  if (security.open && options.length > 0) options.push('No credentials (anonymous)');
  if (options.length < 2) return html``;
  return html`<fieldset>
    <legend>Credentials to send</legend>
    ${options.map((words, index) => radio('alternative', `${prefix}-alt-${index}`, String(index), words, index === 0))}
  </fieldset>`;
}

/** The native OAuth provider an operation can use (the first alternative naming one), with its config. */
export function nativeOAuthOf(
  input: ApiPageInput,
  operation: OperationView,
): { scheme: SupportedScheme; config: ProviderConfig; issuer: string } | undefined {
  const security = input.security.get(operation.anchor);
  const scheme = security?.alternatives.flat().find((s) => s.role === 'oauth2-native');
  const provider = scheme === undefined ? undefined : input.oauthProviders.get(scheme.provider!);
  return scheme && provider ? { scheme, config: provider.config, issuer: provider.issuer } : undefined;
}

function tokenChoice(input: ApiPageInput, operation: OperationView, prefix: string, appId: string): SafeHtml {
  const native = nativeOAuthOf(input, operation);
  const session = native ? input.sessionTokens.get(`${native.config.name}|${appId}`) : undefined;
  const clientCredentials = native?.config.grants.includes('application') === true;
  const first = session ? 'session' : clientCredentials ? 'client-credentials' : 'pasted';
  return html`<fieldset>
    <legend>Access token</legend>
    ${
      session
        ? radio(
            'tokenSource',
            `${prefix}-token-session`,
            'session',
            html`The token you got by signing in (authorization code): scope <code>${session.scope || '(none)'}</code>,
              expires ${session.expiresAt}`,
            true,
          )
        : ''
    }
    ${
      clientCredentials
        ? radio(
            'tokenSource',
            `${prefix}-token-cc`,
            'client-credentials',
            'A client credentials token for the app (needs the client secret)',
            first === 'client-credentials',
          )
        : ''
    }
    ${radio('tokenSource', `${prefix}-token-pasted`, 'pasted', 'A token I paste', first === 'pasted')}
    ${textField(
      `${prefix}-bearer`,
      'Bearer token',
      'bearer',
      'password',
      'Sent as Authorization: Bearer; kept nowhere.',
    )}
  </fieldset>`;
}

function appFields(input: ApiPageInput, prefix: string, selectedApp: string): SafeHtml {
  const selected = input.apps.find((a) => a.app.id === selectedApp) ?? input.apps[0];
  return html`<div class="two-col">
    <div class="field">
      <label for="${prefix}-app">Application</label>
      <select id="${prefix}-app" name="app" data-client-id-target="${prefix}-client-id">
        ${input.apps.map(
          (a) =>
            html`<option
              value="${a.app.id}"
              data-client-id="${a.credential?.client_id ?? ''}"
              ${a.app.id === selected.app.id ? html` selected` : ''}
            >
              ${a.app.title}
            </option>`,
        )}
      </select>
    </div>
    <div class="field">
      <label for="${prefix}-client-id">Client ID</label
      ><input
        type="text"
        id="${prefix}-client-id"
        value="${selected.credential?.client_id ?? ''}"
        readonly
        class="mono"
      />
    </div>
  </div>`;
}

/** The form that leaves for the provider's consent page (authorization code with PKCE). */
function authorizeForm(input: ApiPageInput, operation: OperationView, prefix: string, selectedApp: string): SafeHtml {
  const native = nativeOAuthOf(input, operation);
  if (!native || !native.config.grants.includes('access_code')) return html``;
  const wanted = new Set(native.scheme.scopes ?? []);
  const missing = input.apps.filter((a) => !a.redirectUris.includes(input.callbackUri)).map((a) => a.app.title);
  return html`<form class="authorize-form" method="post" action="${input.apiUrl}/authorize">
    <h4>Get a token by signing in (authorization code with PKCE)</h4>
    <p class="hint" id="${prefix}-callback-hint">
      You sign in on ${native.config.title}'s consent page and come back here. The app must list
      <code>${input.callbackUri}</code> among its redirect
      URIs${missing.length > 0 ? html` (missing on: ${missing.join(', ')}; add it on the app's page)` : ''}.
    </p>
    ${csrfField(input.context.csrfToken)}
    <input type="hidden" name="operation" value="${operation.anchor}" />
    <div class="field">
      <label for="${prefix}-authorize-app">Application to authorize</label>
      <select id="${prefix}-authorize-app" name="app" aria-describedby="${prefix}-callback-hint">
        ${input.apps.map(
          (a) =>
            html`<option value="${a.app.id}" ${a.app.id === selectedApp ? html`selected` : ''}>${a.app.title}</option>`,
        )}
      </select>
    </div>
    <fieldset>
      <legend>Scopes to ask for</legend>
      ${Object.entries(native.config.scopes).map(([name, description]) => {
        const id = `${prefix}-scope-${name}`.replace(/[^A-Za-z0-9_-]/g, '-');
        return html`<div class="choice">
          <input
            type="checkbox"
            id="${id}"
            name="scope"
            value="${name}"
            ${wanted.has(name) ? html` checked` : ''}
          /><label for="${id}"><code>${name}</code> — ${description}</label>
        </div>`;
      })}
    </fieldset>
    <div class="actions"><button type="submit" class="button secondary">Sign in and authorize</button></div>
  </form>`;
}

/** Try it for one operation: credentials, parameters, body, Send, and the answer region. */
export function tryItSection(input: ApiPageInput, operation: OperationView): SafeHtml {
  const { context } = input;
  const headingId = `try-${operation.anchor}`;
  if (!context.user) {
    return html`<section class="tryit" aria-labelledby="${headingId}">
      <h3 id="${headingId}">Try it</h3>
      <p>
        <a href="/sign-in?next=${encodeURIComponent(input.apiUrl)}">Sign in</a> and subscribe an app to try this
        operation.
      </p>
    </section>`;
  }
  if (input.apps.length === 0) {
    return html`<section class="tryit" aria-labelledby="${headingId}">
      <h3 id="${headingId}">Try it</h3>
      <p>You need an app subscribed to a plan of this product. <a href="/apps/new">Create an app</a>.</p>
    </section>`;
  }
  const shown = input.result?.anchor === operation.anchor ? input.result : undefined;
  const values = shown?.values ?? {};
  const selectedApp = values.app ?? input.apps[0].app.id;
  const prefix = operation.anchor;
  const schemes = input.security.get(operation.anchor)!.alternatives.flat();
  const has = (role: SupportedScheme['role']) => schemes.some((s) => s.role === role);
  const oauth = has('oauth2-native') || has('oauth2-introspect');
  const native = nativeOAuthOf(input, operation);
  const needsSecret = has('client-secret') || native?.config.grants.includes('application') === true;
  const secretHint = has('client-secret')
    ? 'Paste the secret shown when the app was created (or reset); it is kept nowhere.'
    : 'Needed for a client credentials token; it is kept nowhere.';
  const editable = operation.parameters.filter((p) => ['query', 'path', 'header'].includes(p.in));
  return html`<section class="tryit" aria-labelledby="${headingId}">
    <h3 id="${headingId}">Try it</h3>
    <form class="tryit-form" method="post" action="${input.apiUrl}/try#${operation.anchor}">
      ${csrfField(context.csrfToken)}
      <input type="hidden" name="operation" value="${operation.anchor}" />
      ${alternativeChoice(input, operation, prefix)} ${appFields(input, prefix, selectedApp)}
      ${needsSecret ? textField(`${prefix}-secret`, 'Client secret', 'clientSecret', 'password', secretHint) : ''}
      ${
        has('basic')
          ? html`${textField(`${prefix}-username`, 'User name', 'username', 'text', 'Of the user registry the operation names.')}
            ${textField(`${prefix}-password`, 'Password', 'password', 'password', 'Sent as HTTP basic; kept nowhere.')}`
          : ''
      }
      ${oauth ? tokenChoice(input, operation, prefix, selectedApp) : ''}
      ${editable.map((p) => parameterInput(operation, p, values))}
      ${operation.body ? html`<div class="field"><label for="${prefix}-body">Request body (${operation.body.contentType})</label><textarea id="${prefix}-body" name="body">${values.body ?? (operation.body.example !== undefined ? JSON.stringify(operation.body.example, null, 2) : '')}</textarea></div>` : ''}
      <div class="actions"><button type="submit" class="button">Send</button></div>
    </form>
    <div class="tryit-result" aria-live="polite">${shown ? tryResultHtml(shown.outcome) : ''}</div>
    ${authorizeForm(input, operation, prefix, selectedApp)}
  </section>`;
}
