/**
 * Search over the products, APIs and operations the visitor may see, on the server: the same
 * visibility rules as the product pages decide what is searched, so a result never names a
 * product the visitor could not open.
 */
import type { FastifyInstance } from 'fastify';
import type { ApiRow, ProductRow } from '../../store/schema.ts';
import { productInfo } from '../catalog-view.ts';
import { portalContext } from '../context.ts';
import type { PortalContext } from '../context.ts';
import type { PortalDeps } from '../deps.ts';
import { html } from '../../web/html.ts';
import type { SafeHtml } from '../../web/html.ts';
import { sendPortalPage } from '../layout.ts';
import { apiView } from '../../web/openapi-view.ts';
import type { ApiView } from '../../web/openapi-view.ts';
import { productUrl } from './products.ts';

/** Longest query read, in characters, and most words matched. */
export const searchLimits = { queryChars: 100, words: 8, resultsPerKind: 50 };

type HitKind = 'product' | 'api' | 'operation';

interface Hit {
  kind: HitKind;
  title: string;
  url: string;
  detail: string;
  /** Lower-cased text the words are matched against. */
  text: string;
}

const viewCacheSize = 200;
const views = new Map<string, { document: string; view: ApiView }>();

/** The API's page view, parsed once per stored document. */
function cachedView(api: ApiRow): ApiView {
  const cached = views.get(api.id);
  if (cached && cached.document === api.document) return cached.view;
  if (views.size >= viewCacheSize) views.clear();
  const view = apiView(JSON.parse(api.document) as Record<string, unknown>);
  views.set(api.id, { document: api.document, view });
  return view;
}

function hit(kind: HitKind, title: string, url: string, detail: string, words: string[]): Hit {
  return { kind, title, url, detail, text: [title, detail, ...words].join(' ').toLowerCase() };
}

function apiHits(product: ProductRow, api: ApiRow, view: ApiView): Hit[] {
  const url = `${productUrl(product)}/apis/${encodeURIComponent(api.name)}/${encodeURIComponent(api.version)}`;
  const inProduct = `${product.title} ${product.version}`;
  const hits = [
    hit('api', `${api.title} ${api.version}`, url, view.description || `In ${inProduct}`, [
      api.name,
      api.base_path,
      inProduct,
    ]),
  ];
  for (const operation of view.operations) {
    const title = `${operation.method} ${operation.path}`;
    const detail = [operation.summary, `${api.title} ${api.version}`].filter(Boolean).join(' · ');
    const words = [operation.description, operation.operationId ?? '', api.title, api.name, inProduct];
    hits.push(hit('operation', title, `${url}#${operation.anchor}`, detail, words));
  }
  return hits;
}

/** Everything the visitor may see, as searchable entries. */
async function visibleEntries(deps: PortalDeps, context: PortalContext): Promise<Hit[]> {
  const { services } = deps;
  const hits: Hit[] = [];
  for (const product of await services.visibleProducts(context)) {
    const info = productInfo(product);
    const title = `${product.title} ${product.version}`;
    hits.push(
      hit('product', title, productUrl(product), info.summary || info.description, [product.name, info.description]),
    );
    for (const link of await services.productApis(product.id)) {
      const api = await services.visibleProductApi(context, product, link.name, link.version);
      hits.push(...apiHits(product, api, cachedView(api)));
    }
  }
  return hits;
}

/** The query's words, lower-cased and bounded. */
export function queryWords(query: string): string[] {
  return query
    .slice(0, searchLimits.queryChars)
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, searchLimits.words);
}

const headings: Record<HitKind, string> = { product: 'API products', api: 'APIs', operation: 'Operations' };

function resultGroup(kind: HitKind, hits: Hit[]): SafeHtml {
  const mine = hits.filter((h) => h.kind === kind);
  if (mine.length === 0) return html``;
  const shown = mine.slice(0, searchLimits.resultsPerKind);
  return html`<section aria-labelledby="results-${kind}">
    <h2 id="results-${kind}">${headings[kind]} <span class="meta">(${mine.length})</span></h2>
    <ul class="results">
      ${shown.map((h) => html`<li><a href="${h.url}">${h.title}</a>${h.detail ? html`<p class="hint">${h.detail}</p>` : ''}</li>`)}
    </ul>
    ${mine.length > shown.length ? html`<p class="hint">The first ${shown.length} are shown: add words to narrow the search.</p>` : ''}
  </section>`;
}

function searchPage(query: string, hits: Hit[] | undefined): SafeHtml {
  const count = hits?.length ?? 0;
  const summary =
    hits === undefined
      ? ''
      : count === 0
        ? html`<p role="status">Nothing matches “${query}”.</p>`
        : html`<p role="status">${count} ${count === 1 ? 'result' : 'results'} for “${query}”.</p>`;
  return html`<h1>Search</h1>
    <form class="search-form" role="search" method="get" action="/search">
      <label for="search-q">Search API products, APIs and operations</label>
      <div class="search-row">
        <input type="search" id="search-q" name="q" value="${query}" maxlength="${searchLimits.queryChars}" /><button
          type="submit"
          class="button"
        >
          Search
        </button>
      </div>
    </form>
    ${summary}${hits ? (['product', 'api', 'operation'] as const).map((kind) => resultGroup(kind, hits)) : ''}`;
}

/** Registers `GET /search?q=`. */
export function registerSearchRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/search', async (request, reply) => {
    const context = portalContext(request);
    const raw = (request.query as { q?: unknown }).q;
    const query = typeof raw === 'string' ? raw.slice(0, searchLimits.queryChars).trim() : '';
    const words = queryWords(query);
    const hits =
      words.length === 0
        ? undefined
        : (await visibleEntries(deps, context)).filter((h) => words.every((w) => h.text.includes(w)));
    return sendPortalPage(reply, context, {
      title: query ? `Search: ${query}` : 'Search',
      section: 'search',
      main: searchPage(query, hits),
    });
  });
}
