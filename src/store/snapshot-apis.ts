/**
 * The API side of a gateway's load (store/snapshot-data.ts): the online APIs the published
 * products bundle, each API's `document` (its largest column) read only where the previous
 * snapshot did not compile that API at the same `updated_at` in every catalog that bundles it
 * now, or where a change since can have changed what it compiles against (a `compileInput` kind:
 * a catalog, a user registry, an OAuth provider or key; or a kind this node does not know): every
 * document then. A compile that still meets an API without its document (an org renamed, an
 * OAuth key aged out of the window) asks for a load with every document (gateway/snapshot.ts,
 * `DocumentsNotRead`).
 */
import { changeKinds } from './changes.ts';
import { readIn } from './in-lists.ts';
import type { ApiRow } from './schema.ts';
import type { Db } from './store.ts';

/** An API as the gateway reads it: no attachments (imports inline them), and the document where read. */
export type SnapshotApi = Omit<ApiRow, 'document' | 'attachments'> & { document?: string };

const compileInputKinds = new Set<string>(changeKinds.compileInput);
const knownKinds = new Set<string>(Object.values(changeKinds).flat());

const apiColumns = [
  'id',
  'org_id',
  'name',
  'version',
  'title',
  'base_path',
  'state',
  'created_at',
  'updated_at',
] as const;

/**
 * The online APIs the products bundle, with the documents of those the previous snapshot cannot
 * reuse: those `compiled` (catalog id|API id → updated_at) does not hold at their `updated_at` in
 * every catalog that bundles them now; every document when `compiled` is absent.
 */
export async function loadApis(
  db: Db,
  products: ReadonlyArray<{ id: string; catalog_id: string }>,
  productApis: ReadonlyArray<{ product_id: string; api_id: string }>,
  compiled: ReadonlyMap<string, string> | undefined,
): Promise<SnapshotApi[]> {
  const catalogOf = new Map(products.map((p) => [p.id, p.catalog_id]));
  const catalogsOf = new Map<string, Set<string>>();
  for (const link of productApis) {
    const catalogs = catalogsOf.get(link.api_id) ?? new Set<string>();
    catalogsOf.set(link.api_id, catalogs.add(catalogOf.get(link.product_id)!));
  }
  if (catalogsOf.size === 0) return [];
  // Every online API, filtered here: a list of 1 000 ids costs more to build and bind than the rows.
  const online: SnapshotApi[] = await db
    .selectFrom('apis')
    .select([...apiColumns])
    .where('state', '=', 'online')
    .execute();
  const apis = online.filter((api) => catalogsOf.has(api.id));
  const reused = (api: SnapshotApi) =>
    compiled !== undefined &&
    [...catalogsOf.get(api.id)!].every((catalogId) => compiled.get(`${catalogId}|${api.id}`) === api.updated_at);
  const unread = apis.filter((api) => !reused(api)).map((api) => api.id);
  if (unread.length === 0) return apis;
  const documents = await readIn(unread, (ids) =>
    db.selectFrom('apis').select(['id', 'document']).where('id', 'in', ids).execute(),
  );
  const documentOf = new Map(documents.map((row) => [row.id, row.document]));
  for (const api of apis) api.document = documentOf.get(api.id);
  return apis;
}

/**
 * Whether a change since the base (undefined: not comparable) can have changed what every API
 * compiles against: a `compileInput` kind, or one this node does not know (a newer node's).
 */
export function compileInputsChanged(changes: ReadonlyArray<{ kind: string }> | undefined): boolean {
  return changes === undefined || changes.some(({ kind }) => compileInputKinds.has(kind) || !knownKinds.has(kind));
}
