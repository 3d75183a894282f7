/** The console's page frame: header with the provider's navigation, footer, error pages. */
import type { FastifyReply } from 'fastify';
import { csrfField } from '../../web/components.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import { documentShell, sendPage } from '../../web/page-shell.ts';
import type { ProviderUser } from '../../store/schema.ts';

export type ConsoleSection =
  | 'overview'
  | 'apis'
  | 'products'
  | 'approvals'
  | 'consumers'
  | 'registries'
  | 'oauth'
  | 'analytics'
  | 'users'
  | 'sign-in';

export interface ConsoleView {
  user?: ProviderUser;
  csrfToken: string;
  catalog?: string;
  pendingCount?: number;
}

export interface ConsolePage {
  title: string;
  main: SafeHtml;
  section?: ConsoleSection;
  status?: number;
}

const links: Array<[ConsoleSection, string, string]> = [
  ['overview', '/console', 'Overview'],
  ['apis', '/console/apis', 'APIs'],
  ['products', '/console/products', 'Products'],
  ['approvals', '/console/approvals', 'Approvals'],
  ['consumers', '/console/consumers', 'Consumers'],
  ['registries', '/console/user-registries', 'User registries'],
  ['oauth', '/console/oauth-providers', 'OAuth providers'],
  ['analytics', '/console/analytics', 'Analytics'],
  ['users', '/console/users', 'Users'],
];

function header(view: ConsoleView, section: ConsoleSection | undefined): SafeHtml {
  const nav = view.user
    ? html`${links.map(
          ([key, href, label]) =>
            html`<li>
              <a href="${href}" ${key === section ? html`aria-current="page"` : ''}
                >${label}${key === 'approvals' && view.pendingCount ? html` (${view.pendingCount})` : ''}</a
              >
            </li>`,
        )}
        <li class="who">${view.user.username} · ${view.user.role}</li>
        <li>
          <form method="post" action="/console/sign-out">
            ${csrfField(view.csrfToken)}<button type="submit" class="link-button">Sign out</button>
          </form>
        </li>`
    : html`<li><a href="/console/sign-in" aria-current="page">Sign in</a></li>`;
  return html`<header class="site-header">
    <div class="bar">
      <a class="brand" href="/console"
        >Portico<small>Provider console${view.catalog ? ` · ${view.catalog}` : ''}</small></a
      >
      <nav class="site-nav" aria-label="Console">
        <ul>
          ${nav}
        </ul>
      </nav>
    </div>
  </header>`;
}

const footer = html`<footer class="site-footer">
  <div>Portico provider console · the REST API is at <a href="/api/openapi.json">/api/openapi.json</a>.</div>
</footer>`;

/** Renders and sends a console page. */
export function sendConsolePage(reply: FastifyReply, view: ConsoleView, page: ConsolePage): FastifyReply {
  const body = documentShell({
    title: `${page.title} · Portico console`,
    staticPrefix: '/console/static',
    header: header(view, page.section),
    main: page.main,
    footer,
  });
  return sendPage(reply, body, page.status);
}

/** An error page in words. */
export function sendConsoleError(
  reply: FastifyReply,
  view: ConsoleView,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  return sendConsolePage(reply, view, {
    title,
    status,
    main: html`<h1>${title}</h1>
      <p class="lede">${message}</p>
      <p><a class="button" href="/console">Back to the overview</a></p>`,
  });
}
