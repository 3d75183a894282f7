/**
 * The sign-in and consent page of the authorize endpoint, in the portal's words and without
 * script or remote files: the resource owner signs in against the provider's user registry and
 * allows or denies the app the scopes it asks for.
 */
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';

export interface ConsentView {
  providerTitle: string;
  appTitle: string;
  scopes: Array<{ name: string; description: string }>;
  /** The authorization request, carried through the form unchanged. */
  request: Record<string, string>;
  csrf: string;
  action: string;
  error?: string;
}

/** The whole page. */
export function consentPage(view: ConsentView): string {
  const hidden: SafeHtml[] = Object.entries(view.request).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
  const scopes = view.scopes.map((scope) => html`<li><strong>${scope.name}</strong>: ${scope.description}</li>`);
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sign in to ${view.providerTitle}</title>
      </head>
      <body>
        <main id="main">
          <h1>${view.appTitle} wants to access your account</h1>
          <p>Sign in to ${view.providerTitle} to allow it:</p>
          <ul>
            ${scopes}
          </ul>
          ${view.error === undefined ? '' : html`<p role="alert" id="error">${view.error}</p>`}
          <form method="post" action="${view.action}">
            ${hidden}
            <input type="hidden" name="csrf" value="${view.csrf}" />
            <p>
              <label for="username">User name</label>
              <input id="username" name="username" autocomplete="username" required />
            </p>
            <p>
              <label for="password">Password</label>
              <input id="password" name="password" type="password" autocomplete="current-password" required />
            </p>
            <p>
              <button type="submit" name="decision" value="allow" id="allow">Allow</button>
              <button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
            </p>
          </form>
        </main>
      </body>
    </html> `.value;
}

/** A page for a request that cannot be sent back to the client (unknown client, unregistered redirect URI). */
export function errorPage(message: string): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Authorization failed</title>
      </head>
      <body>
        <main id="main">
          <h1>Authorization failed</h1>
          <p id="error">${message}</p>
        </main>
      </body>
    </html> `.value;
}
