/**
 * Schemas split at their `$ref`s, so that validation stays linear in the problems it finds.
 *
 * With `allErrors`, ajv calls a referenced schema it cannot inline (one that holds a `$ref`
 * itself, as Swagger's recursive `items` does) as a function of its own, and adds that
 * function's errors with `vErrors = vErrors.concat(callee.errors)`: the caller's whole list is
 * copied at every failing call (ajv `lib/vocabularies/core/ref.ts`, `addErrorsFrom`). A document
 * with 10,000 bad parameters copied its list 10,000 times (15 s; 20,000 took 90 s).
 *
 * Here each such `$ref` is replaced by a marker that always fails (`not: {}`) and names the
 * definition; the caller validates the marked value against that definition on its own and
 * puts its problems where the marker's error stands, which is where ajv put the callee's errors.
 * Only refs whose failure decides nothing are marked (under `properties`, `patternProperties`,
 * `additionalProperties`, `items`, `allOf`, `then`, `else`): one under `anyOf`, `oneOf`, `not`
 * or an `if` condition stays an ordinary `$ref`, so the rules read exactly as written.
 */
import type { JSONSchema } from './json-schema.ts';
import { isRecord } from './json-path.ts';

/** The keyword of a marker; its value is the definition's name. */
export const refMarker = 'x-portico-ref';

const definitionRef = /^#\/definitions\/([^/~%]+)$/;

/** Keywords whose value is one schema that may be marked. */
const schemaKeywords = ['additionalProperties', 'items', 'then', 'else'];
/** Keywords whose value is a map or list of schemas that may be marked. */
const schemaMapKeywords = ['properties', 'patternProperties'];

/**
 * The schema to compile for `root` itself (`definition` undefined) or for one of its
 * definitions: safe refs marked, the root's `definitions` kept (unmarked) for the refs left as
 * they are.
 */
export function splitSchema(root: JSONSchema, definition: string | undefined): JSONSchema {
  const definitions = isRecord(root.definitions) ? root.definitions : {};
  const part = definition === undefined ? root : definitions[definition];
  if (!isRecord(part)) throw new Error(`schema has no definition ${String(definition)}`);
  return { ...markRefs(part, definitions), definitions };
}

/** The definition a marker stands for, when `schema` is one. */
export function markedDefinition(schema: unknown): string | undefined {
  if (!isRecord(schema)) return undefined;
  const name = schema[refMarker];
  return typeof name === 'string' ? name : undefined;
}

function markRefs(schema: JSONSchema, definitions: Record<string, unknown>): JSONSchema {
  const copy: JSONSchema = { ...schema };
  for (const keyword of schemaKeywords) {
    const value = copy[keyword];
    if (Array.isArray(value)) copy[keyword] = value.map((item) => marked(item, definitions));
    else copy[keyword] = marked(value, definitions);
    if (value === undefined) delete copy[keyword];
  }
  for (const keyword of schemaMapKeywords) {
    const value = copy[keyword];
    if (!isRecord(value)) continue;
    copy[keyword] = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, marked(item, definitions)]));
  }
  if (Array.isArray(copy.allOf)) copy.allOf = copy.allOf.map((item) => marked(item, definitions));
  return copy;
}

function marked(schema: unknown, definitions: Record<string, unknown>): unknown {
  if (!isRecord(schema)) return schema;
  const keys = Object.keys(schema);
  const ref = keys.length === 1 && typeof schema.$ref === 'string' ? definitionRef.exec(schema.$ref) : null;
  if (ref && isRecord(definitions[ref[1]])) return { not: {}, [refMarker]: ref[1] };
  return markRefs(schema, definitions);
}
