/** API definitions of a provider organization (the draft space). */
import { sql } from 'kysely';
import type { Db } from './store.ts';
import type { ApiRow, ApiState } from './schema.ts';
import { readIn } from './in-lists.ts';
import { newId, now } from './secrets.ts';

export interface NewApi {
  orgId: string;
  name: string;
  version: string;
  title: string;
  basePath: string;
  document: Record<string, unknown>;
  attachments?: Record<string, string>;
  state?: ApiState;
}

export async function insertApi(db: Db, input: NewApi): Promise<ApiRow> {
  const stamp = now();
  const row: ApiRow = {
    id: newId(),
    org_id: input.orgId,
    name: input.name,
    version: input.version,
    title: input.title,
    base_path: input.basePath,
    state: input.state ?? 'offline',
    document: JSON.stringify(input.document),
    attachments: JSON.stringify(input.attachments ?? {}),
    created_at: stamp,
    updated_at: stamp,
  };
  await db.insertInto('apis').values(row).execute();
  return row;
}

export async function replaceApiDocument(
  db: Db,
  id: string,
  input: {
    title: string;
    basePath: string;
    document: Record<string, unknown>;
    attachments?: Record<string, string>;
  },
): Promise<void> {
  await db
    .updateTable('apis')
    .set({
      title: input.title,
      base_path: input.basePath,
      document: JSON.stringify(input.document),
      ...(input.attachments ? { attachments: JSON.stringify(input.attachments) } : {}),
      updated_at: now(),
    })
    .where('id', '=', id)
    .execute();
}

export function findApi(db: Db, orgId: string, name: string, version: string): Promise<ApiRow | undefined> {
  return db
    .selectFrom('apis')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('name', '=', name)
    .where('version', '=', version)
    .executeTakeFirst();
}

export function findApiById(db: Db, id: string): Promise<ApiRow | undefined> {
  return db.selectFrom('apis').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The APIs with these ids, by id (an id naming none is not a key); in statements of at most 10,000 ids (in-lists.ts). */
export async function findApisByIds(db: Db, ids: readonly string[]): Promise<Map<string, ApiRow>> {
  const rows = await readIn(ids, (slice) => db.selectFrom('apis').selectAll().where('id', 'in', slice).execute());
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * The org's APIs with these names and versions: one entry per ref, in their order, undefined for
 * a ref naming none. Read by pairs (`(name, version) in (values …)`: a list of names and a list
 * of versions had SQLite probe every combination, minutes for 30,000 refs); one statement per
 * 10,000 values (two a ref; in-lists.ts).
 */
export async function findApisByNames(
  db: Db,
  orgId: string,
  refs: ReadonlyArray<{ name: string; version: string }>,
): Promise<Array<ApiRow | undefined>> {
  const key = (api: { name: string; version: string }) => JSON.stringify([api.name, api.version]);
  const pairs = new Map(refs.map((ref) => [key(ref), ref]));
  const rows = await readIn(
    pairs.values(),
    (slice) => {
      const values = sql.join(slice.map((ref) => sql`(${ref.name}, ${ref.version})`));
      return db
        .selectFrom('apis')
        .selectAll()
        .where('org_id', '=', orgId)
        .where(sql<boolean>`(name, version) in (values ${values})`)
        .execute();
    },
    2,
  );
  const byRef = new Map(rows.map((row) => [key(row), row]));
  return refs.map((ref) => byRef.get(key(ref)));
}

/** An API as its org's list shows it: everything but the document and its attachments. */
export type ApiListRow = Omit<ApiRow, 'document' | 'attachments'>;

/**
 * The org's APIs by name and version, without their documents (each may hold 10 MiB; the list is
 * read by every console page that names the org's APIs).
 */
export function listApis(db: Db, orgId: string): Promise<ApiListRow[]> {
  return db
    .selectFrom('apis')
    .select(['id', 'org_id', 'name', 'version', 'title', 'base_path', 'state', 'created_at', 'updated_at'])
    .where('org_id', '=', orgId)
    .orderBy('name')
    .orderBy('version')
    .execute();
}

export async function setApiState(db: Db, id: string, state: ApiState): Promise<void> {
  await db.updateTable('apis').set({ state, updated_at: now() }).where('id', '=', id).execute();
}

/** Products (any catalog) that bundle the API. */
export async function productsUsingApi(
  db: Db,
  apiId: string,
): Promise<Array<{ id: string; name: string; version: string }>> {
  return db
    .selectFrom('product_apis')
    .innerJoin('products', 'products.id', 'product_apis.product_id')
    .select(['products.id', 'products.name', 'products.version'])
    .where('product_apis.api_id', '=', apiId)
    .execute();
}

/** For each API of the org that a product (any catalog) bundles, those products, in one statement. */
export async function productsUsingOrgApis(
  db: Db,
  orgId: string,
): Promise<Map<string, Array<{ id: string; name: string; version: string }>>> {
  const rows = await db
    .selectFrom('product_apis')
    .innerJoin('products', 'products.id', 'product_apis.product_id')
    .innerJoin('apis', 'apis.id', 'product_apis.api_id')
    .select(['product_apis.api_id as apiId', 'products.id', 'products.name', 'products.version'])
    .where('apis.org_id', '=', orgId)
    .orderBy('products.name')
    .orderBy('products.version')
    .execute();
  const byApi = new Map<string, Array<{ id: string; name: string; version: string }>>();
  for (const { apiId, ...product } of rows) {
    const list = byApi.get(apiId);
    if (list) list.push(product);
    else byApi.set(apiId, [product]);
  }
  return byApi;
}

export async function deleteApi(db: Db, id: string): Promise<void> {
  await db.deleteFrom('apis').where('id', '=', id).execute();
}

/** The APIs served in a catalog (by its published and deprecated products), optionally but one product's. */
export function servedApiBasePaths(db: Db, catalogId: string, exceptProductId: string | undefined) {
  let query = db
    .selectFrom('product_apis')
    .innerJoin('products', 'products.id', 'product_apis.product_id')
    .innerJoin('apis', 'apis.id', 'product_apis.api_id')
    .select(['apis.id', 'apis.name', 'apis.version', 'apis.base_path'])
    .select(['products.name as product_name', 'products.version as product_version'])
    .where('products.catalog_id', '=', catalogId)
    .where('products.state', 'in', ['published', 'deprecated']);
  if (exceptProductId !== undefined) query = query.where('products.id', '!=', exceptProductId);
  return query.execute();
}

/** The catalogs that serve the API now (through a published or deprecated product). */
export async function catalogsServingApi(db: Db, apiId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('product_apis')
    .innerJoin('products', 'products.id', 'product_apis.product_id')
    .select('products.catalog_id')
    .distinct()
    .where('product_apis.api_id', '=', apiId)
    .where('products.state', 'in', ['published', 'deprecated'])
    .execute();
  return rows.map((row) => row.catalog_id);
}
