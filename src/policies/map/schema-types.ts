/**
 * Output typing for the map policy: the type the output schema declares at a target path
 * (resolved through `$ref`s at publish time), and the conversion of a mapped value to it, so a
 * SOAP `'299.71'` lands as the number 299.71 in a `type: number` field.
 */
import type { CompiledApiInfo, JSONSchema } from '../types.ts';
import { resolveRef } from '../policy-config.ts';
import { schemaTypeNamed } from '../../soap/xml-schema-node.ts';

export type ScalarType = 'number' | 'integer' | 'boolean' | 'string';

/** The declared type at a path, with the schema found there (for nested foreach actions). */
export interface TypedNode {
  schema: JSONSchema | undefined;
  type: ScalarType | 'object' | 'array' | undefined;
}

function deref(schema: JSONSchema | undefined, api: CompiledApiInfo, path: string): JSONSchema | undefined {
  if (schema === undefined) return undefined;
  return typeof schema.$ref === 'string' ? resolveRef(schema.$ref, api, path) : schema;
}

function typeOf(schema: JSONSchema | undefined): TypedNode['type'] {
  if (schema === undefined) return undefined;
  const declared = Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type;
  if (typeof declared === 'string') return schemaTypeNamed(declared);
  if (typeof schema.properties === 'object') return 'object';
  return undefined;
}

/** The schema node at `segments` below `schema` (properties, array items, additionalProperties). */
export function nodeAt(
  schema: JSONSchema | undefined,
  segments: string[],
  api: CompiledApiInfo,
  path: string,
): TypedNode {
  let node = deref(schema, api, path);
  for (const segment of segments) {
    if (node === undefined) break;
    const properties = node.properties as Record<string, JSONSchema> | undefined;
    if (properties !== undefined && Object.hasOwn(properties, segment)) node = deref(properties[segment], api, path);
    else if (/^\d+$/.test(segment) && typeof node.items === 'object') node = deref(node.items as JSONSchema, api, path);
    else if (typeof node.additionalProperties === 'object')
      node = deref(node.additionalProperties as JSONSchema, api, path);
    else node = undefined;
  }
  return { schema: node, type: typeOf(node) };
}

/** The item schema of an array node. */
export function itemsOf(node: TypedNode, api: CompiledApiInfo, path: string): TypedNode {
  const items = node.schema?.items;
  const schema =
    typeof items === 'object' && items !== null && !Array.isArray(items)
      ? deref(items as JSONSchema, api, path)
      : undefined;
  return { schema, type: typeOf(schema) };
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
