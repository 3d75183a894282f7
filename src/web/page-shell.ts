/** The HTML document around every portal and console page, and the security headers they are sent with. */
import type { FastifyReply } from 'fastify';
import { html } from './html.ts';
import type { SafeHtml } from './html.ts';
import { staticUrl } from './static-files.ts';

/**
 * Content-Security-Policy: only this origin's files; no inline script, no inline style, no
 * plugins, no framing; forms post only back here.
 */
const contentSecurityPolicy =
  "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Sets the headers every HTML answer carries. */
export function setSecurityHeaders(reply: FastifyReply): void {
  reply
    .header('content-security-policy', contentSecurityPolicy)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin');
}

export interface ShellInput {
  title: string;
  /** Where the static files are served, e.g. `/static` or `/console/static`. */
  staticPrefix: string;
  header: SafeHtml;
  main: SafeHtml;
  footer: SafeHtml;
}

/** The whole HTML document: skip link, header, `<main id="main">`, footer. */
export function documentShell(input: ShellInput): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${input.title}</title>
        <link rel="stylesheet" href="${staticUrl(input.staticPrefix, 'portal.css')}" />
        <script src="${staticUrl(input.staticPrefix, 'portal.js')}" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        ${input.header}
        <main id="main" tabindex="-1">${input.main}</main>
        ${input.footer}
      </body>
    </html> `.value;
}

/** Sends an HTML page with its status and the security headers; pages with secrets are not cached. */
export function sendPage(reply: FastifyReply, body: string, status = 200): FastifyReply {
  setSecurityHeaders(reply);
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(body);
}
