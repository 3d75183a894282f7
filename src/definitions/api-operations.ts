/**
 * The operations of an API document (Swagger 2.0 or OpenAPI 3.x), read straight from `paths`,
 * with their JSON paths: used both to validate (unique operation ids, operation-switch cases,
 * path parameters) and to normalise into {@link OperationDef}s.
 */
import type { HttpVerb } from './types.ts';
import { resolvePointer } from './check-refs.ts';
import { appendPath, isRecord } from './json-path.ts';

export const httpVerbs: readonly HttpVerb[] = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** One operation as written, with where it is. */
export interface RawOperation {
  id: string | undefined;
  verb: HttpVerb;
  path: string;
  /** JSON path of the operation object, e.g. `$.paths['/shipping'].get`. */
  at: string;
  operation: Record<string, unknown>;
  pathItem: Record<string, unknown>;
}

/** The operations under `paths`, in document order; malformed entries are skipped (the schema reports them). */
export function rawOperations(document: Record<string, unknown>): RawOperation[] {
  const paths = document.paths;
  if (!isRecord(paths)) return [];
  const operations: RawOperation[] = [];
  for (const [path, written] of Object.entries(paths)) {
    if (!path.startsWith('/')) continue;
    const pathItem = resolveLocal(document, written);
    if (!isRecord(pathItem)) continue;
    for (const verb of httpVerbs) {
      const operation = pathItem[verb];
      if (!isRecord(operation)) continue;
      const id = typeof operation.operationId === 'string' ? operation.operationId : undefined;
      operations.push({
        id,
        verb,
        path,
        at: appendPath(appendPath(appendPath('$', 'paths'), path), verb),
        operation,
        pathItem,
      });
    }
  }
  return operations;
}

/** Follows `{$ref: '#/…'}` once; other values are returned as they are. */
export function resolveLocal(document: Record<string, unknown>, value: unknown): unknown {
  if (isRecord(value) && typeof value.$ref === 'string') return resolvePointer(document, value.$ref);
  return value;
}
