/**
 * Output typing for the map policy: the type the output schema declares at a target path
 * (resolved through `$ref`s at publish time), and the conversion of a mapped value to it, so a
 * SOAP `'299.71'` lands as the number 299.71 in a `type: number` field.
 */
import type { JSONSchema } from '../types.ts';
import { resolveRefAt } from '../policy-config.ts';
import type { DocumentOnly } from '../policy-config.ts';
import { schemaTypeNamed } from '../../soap/xml-schema-node.ts';

export type ScalarType = 'number' | 'integer' | 'boolean' | 'string';

/** The declared type at a path, with the schema found there (for nested foreach actions). */
export interface TypedNode {
  schema: JSONSchema | undefined;
  type: ScalarType | 'object' | 'array' | undefined;
  /** The target service the schema lives in (`#/x-ibm-configuration/targets/x`), where its refs resolve first; '' for none. */
  base: string;
}

function deref(
  schema: JSONSchema | undefined,
  base: string,
  api: DocumentOnly,
  path: string,
): { schema: JSONSchema | undefined; base: string } {
  if (schema === undefined || typeof schema.$ref !== 'string') return { schema, base };
  return resolveRefAt(schema.$ref, api, path, base);
}

function typeOf(schema: JSONSchema | undefined): TypedNode['type'] {
  if (schema === undefined) return undefined;
  const declared = Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type;
  if (typeof declared === 'string') return schemaTypeNamed(declared);
  if (typeof schema.properties === 'object') return 'object';
  return undefined;
}

/**
 * The schema node at `segments` below `schema` (properties, array items, additionalProperties),
 * its refs resolved as written in `base` (a target service, or '' for the document).
 */
export function nodeAt(
  schema: JSONSchema | undefined,
  segments: string[],
  api: DocumentOnly,
  path: string,
  base = '',
): TypedNode {
  let node = deref(schema, base, api, path);
  for (const segment of segments) {
    const current = node.schema;
    if (current === undefined) break;
    const properties = current.properties as Record<string, JSONSchema> | undefined;
    if (properties !== undefined && Object.hasOwn(properties, segment))
      node = deref(properties[segment], node.base, api, path);
    else if (/^\d+$/.test(segment) && typeof current.items === 'object')
      node = deref(current.items as JSONSchema, node.base, api, path);
    else if (typeof current.additionalProperties === 'object')
      node = deref(current.additionalProperties as JSONSchema, node.base, api, path);
    else node = { schema: undefined, base: node.base };
  }
  return { schema: node.schema, type: typeOf(node.schema), base: node.base };
}

/** The item schema of an array node. */
export function itemsOf(node: TypedNode, api: DocumentOnly, path: string): TypedNode {
  const items = node.schema?.items;
  const found =
    typeof items === 'object' && items !== null && !Array.isArray(items)
      ? deref(items as JSONSchema, node.base, api, path)
      : { schema: undefined, base: node.base };
  return { schema: found.schema, type: typeOf(found.schema), base: found.base };
}

/** Converts a mapped value to the declared scalar type; returns an Error when it cannot. */
export function convertTo(type: TypedNode['type'], value: unknown): unknown {
  if (value === null || value === undefined) return value;
  switch (type) {
    case 'number':
    case 'integer': {
      const number =
        typeof value === 'number'
          ? value
          : typeof value === 'boolean'
            ? Number(value)
            : typeof value === 'string' && value.trim() !== ''
              ? Number(value)
              : NaN;
      if (Number.isNaN(number)) return new Error(`${JSON.stringify(value)} is not a number`);
      if (type === 'integer' && !Number.isInteger(number))
        return new Error(`${JSON.stringify(value)} is not an integer`);
      return number;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      if (typeof value === 'number') return value !== 0;
      return new Error(`${JSON.stringify(value)} is not a boolean`);
    case 'string':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return JSON.stringify(value);
    default:
      return value;
  }
}
