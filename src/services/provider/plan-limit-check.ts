/**
 * The publish-time rule `unknown-plan-limit` on stored products and APIs: every plan covering an
 * API defines each limit its assembly counts against with `source: plan-named`
 * (policies/plan-limit-refs.ts). Checked on every path that makes a product serve an API — a
 * product published from its document or through its lifecycle — and on an API replaced while a
 * published or deprecated product serves it.
 */
import { DefinitionError } from '../../errors.ts';
import type { DefinitionProblem } from '../../errors.ts';
import { appendPath } from '../../definitions/json-path.ts';
import { gapReason, planLimitGaps, planLimitReferences } from '../../policies/plan-limit-refs.ts';
import type { BundledApi } from '../../policies/plan-limit-refs.ts';
import * as apisRepo from '../../store/apis.ts';
import { listCatalogs, lockCatalogs } from '../../store/orgs.ts';
import * as products from '../../store/products.ts';
import type { ApiRow } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';

type Document = Record<string, unknown>;

/** A stored API read for a publish's checks: its row, and its document parsed once when first asked. */
export interface LoadedApi {
  readonly row: ApiRow;
  document(): Document;
}

/**
 * Refuses a product about to be published whose plans leave out a limit one of its APIs names:
 * `file` is the product file (or `name:version` when published from the store), each problem at
 * the plan's path in the product document. `links` are the product's keys with the stored APIs
 * they name (a key naming no stored API left out).
 * @throws DefinitionError `DEF_INVALID`, rule `unknown-plan-limit`.
 */
export function checkProductPlanLimits(
  file: string,
  productDocument: Document,
  links: ReadonlyArray<{ key: string; api: LoadedApi }>,
): void {
  const apis = links.map(({ key, api }) => bundled(api.row, key, api.document()));
  const product = productRef(productDocument);
  const problems: DefinitionProblem[] = planLimitGaps(productDocument, apis).map((gap) => ({
    path: appendPath('$.plans', gap.plan),
    rule: 'unknown-plan-limit',
    reason: gapReason(gap, product),
  }));
  if (problems.length > 0) throw new DefinitionError(file, problems);
}

/**
 * Refuses the new document of a stored API when a published or deprecated product serving it has
 * a plan covering it that does not define a limit the document names: `file` is the API file,
 * each problem at the reference's path in it. An API without plan-named references is not
 * looked further at; one with them takes the locks a publish takes (every catalog of its
 * organization), so that no publish checks the old document meanwhile.
 * @throws DefinitionError `DEF_INVALID`, rule `unknown-plan-limit`.
 */
export async function checkServedApiPlanLimits(
  trx: Db,
  dialect: 'sqlite' | 'postgres',
  api: ApiRow,
  document: Document,
  file: string,
): Promise<void> {
  if (planLimitReferences(document).length === 0) return;
  const catalogs = await listCatalogs(trx, api.org_id);
  await lockCatalogs(
    trx,
    dialect,
    catalogs.map((c) => c.id),
  );
  const problems: DefinitionProblem[] = [];
  // One row per key the product gives the API: each product once, with all of its keys.
  const productIds = new Set((await apisRepo.productsUsingApi(trx, api.id)).map((row) => row.id));
  for (const id of productIds) {
    const product = await products.findProductById(trx, id);
    if (!product || (product.state !== 'published' && product.state !== 'deprecated')) continue;
    const keys = (await products.listProductApis(trx, id)).filter((row) => row.id === api.id);
    const productDocument = JSON.parse(product.document) as Document;
    const apis = keys.map((row) => bundled(api, row.api_key, document));
    for (const gap of planLimitGaps(productDocument, apis)) {
      const reason = gapReason(gap, `${product.name}:${product.version} (${product.state})`);
      problems.push({ path: gap.reference.path, rule: 'unknown-plan-limit', reason });
    }
  }
  if (problems.length > 0) throw new DefinitionError(file, problems);
}

function bundled(api: ApiRow, key: string, document: Document): BundledApi {
  return { key, ref: `${api.name}:${api.version}`, document };
}

function productRef(document: Document): string {
  const info = (document.info ?? {}) as Document;
  return `${String(info.name)}:${String(info.version)}`;
}
