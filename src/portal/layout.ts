/** The portal's page frame: header with navigation and account links, footer, error pages. */
import type { FastifyReply } from 'fastify';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import { csrfField, notice } from '../web/components.ts';
import type { PortalContext } from './context.ts';
import { documentShell, sendPage } from '../web/page-shell.ts';

export type PortalSection = 'home' | 'products' | 'apps' | 'account' | 'sign-in' | 'sign-up' | 'search';

export interface PortalPage {
  title: string;
  main: SafeHtml;
  section?: PortalSection;
  status?: number;
}

function navLink(href: string, label: string, current: boolean): SafeHtml {
  return html`<li><a href="${href}" ${current ? html`aria-current="page"` : ''}>${label}</a></li>`;
}

function header(context: PortalContext | undefined, section: PortalSection | undefined): SafeHtml {
  const user = context?.user;
  const account = user
    ? html`<li class="who">${user.email}</li>
        ${navLink('/account', 'Account', section === 'account')}
        <li>
          <form method="post" action="/sign-out">
            ${csrfField(context!.csrfToken)}<button type="submit" class="link-button">Sign out</button>
          </form>
        </li>`
    : html`${navLink('/sign-in', 'Sign in', section === 'sign-in')}${navLink('/sign-up', 'Create account', section === 'sign-up')}`;
  return html`<header class="site-header">
    <div class="bar">
      <a class="brand" href="/">Portico<small>Developer Portal</small></a>
      <nav class="site-nav" aria-label="Main">
        <ul>
          ${navLink('/', 'Home', section === 'home')}${navLink('/products', 'API Products', section === 'products')}${user ? navLink('/apps', 'Apps', section === 'apps') : ''}
          ${navLink('/search', 'Search', section === 'search')} ${account}
        </ul>
      </nav>
    </div>
  </header>`;
}

const footer = html`<footer class="site-footer">
  <div>Portico developer portal · calls go through the API gateway with your app's client id.</div>
</footer>`;

/**
 * Above every page of a signed-in account whose address is not verified: what it may not do
 * yet, and a way to get a new link — or, without a mail server, who can help.
 */
function verificationBanner(context: PortalContext | undefined): SafeHtml | '' {
  if (!context?.user || context.user.email_verified_at) return '';
  if (!context.mailConfigured) {
    return notice(
      'warn',
      html`Your email address is not verified, and this portal cannot send email (no mail server is configured), so you
      see only public products and cannot create apps or subscribe. Ask the API provider to verify your account.`,
    );
  }
  return notice(
    'warn',
    html`<p>
        Check your email: open the link we sent to ${context.user.email} to verify your address. Until then you see only
        public products and cannot create apps or subscribe.
      </p>
      <form method="post" action="/account/verification" class="inline">
        ${csrfField(context.csrfToken)}
        <button type="submit" class="button secondary">Send the link again</button>
      </form>`,
  );
}

/** Renders and sends a portal page. */
export function sendPortalPage(
  reply: FastifyReply,
  context: PortalContext | undefined,
  page: PortalPage,
): FastifyReply {
  const catalogTitle = context?.catalog.title;
  const title = catalogTitle ? `${page.title} · ${catalogTitle} · Portico` : `${page.title} · Portico`;
  const main = html`${verificationBanner(context)}${page.main}`;
  const shell = { title, staticPrefix: '/static', header: header(context, page.section), main, footer };
  const document = documentShell(shell);
  return sendPage(reply, document, page.status);
}

/** A page that explains an error in words, with a way onwards. */
export function sendPortalError(
  reply: FastifyReply,
  context: PortalContext | undefined,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  const main = html`<h1>${title}</h1>
    <p class="lede">${message}</p>
    <p>
      <a class="button" href="/">Go to the home page</a>
      <a class="button secondary" href="/products">Browse API products</a>
    </p>`;
  return sendPortalPage(reply, context, { title, main, status });
}
