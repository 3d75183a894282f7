/**
 * Example values built from a JSON schema (OpenAPI 2.0 / 3.x dialect) for documents that give
 * none: the schema's own `example`/`examples`/`default`/`const`/`enum` first, else a value that
 * fits its type, format, length and numeric bounds. Deterministic: the same schema always gives
 * the same value, so pages, code samples and tests agree.
 */

type Json = Record<string, unknown>;

const maxDepth = 8;
const maxArrayItems = 3;

/** Values for string formats (JSON Schema §7.3 and the OpenAPI format registry). */
const formatExamples: Record<string, string> = {
  'date-time': '2024-01-15T09:30:00Z',
  date: '2024-01-15',
  time: '09:30:00Z',
  email: 'developer@example.com',
  'idn-email': 'developer@example.com',
  uri: 'https://example.com/resource',
  url: 'https://example.com/resource',
  iri: 'https://example.com/resource',
  'uri-reference': '/resource',
  hostname: 'api.example.com',
  'idn-hostname': 'api.example.com',
  ipv4: '192.0.2.10',
  ipv6: '2001:db8::10',
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  byte: 'ZXhhbXBsZQ==',
  binary: 'example',
  password: 'example-password',
  duration: 'PT1H',
};

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a local JSON pointer (`#/definitions/Item`), or undefined. */
function pointer(root: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    if (!isObject(node)) return undefined;
    node = node[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

interface Walk {
  root?: Json;
  /** `$ref`s being expanded on the way down: a cycle stops there. */
  trail: string[];
  depth: number;
}

function numberBound(schema: Json, key: 'minimum' | 'maximum'): { value: number; exclusive: boolean } | undefined {
  const exclusiveKey = key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  // OpenAPI 3.1 / JSON Schema: the exclusive bound is a number; 2.0 and 3.0: a flag on the bound.
  if (typeof schema[exclusiveKey] === 'number') return { value: schema[exclusiveKey] as number, exclusive: true };
  if (typeof schema[key] !== 'number') return undefined;
  return { value: schema[key] as number, exclusive: schema[exclusiveKey] === true };
}

/** A number inside the bounds: their midpoint when both exist, else `preferred` moved inside the one. */
function numberExample(schema: Json, integer: boolean): number {
  const step = integer ? 1 : 0.01;
  const min = numberBound(schema, 'minimum');
  const max = numberBound(schema, 'maximum');
  const low = min ? min.value + (min.exclusive ? step : 0) : undefined;
  const high = max ? max.value - (max.exclusive ? step : 0) : undefined;
  let value = integer ? 1 : 9.99;
  if (low !== undefined && high !== undefined) value = low + (high - low) / 2;
  else if (low !== undefined && value < low) value = low;
  else if (high !== undefined && value > high) value = high;
  const multiple = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : undefined;
  if (multiple) value = Math.ceil(value / multiple) * multiple;
  if (integer) return Math.floor(value);
  return Math.round(value * 100) / 100;
}

function stringExample(schema: Json, name: string): string {
  const format = typeof schema.format === 'string' ? formatExamples[schema.format] : undefined;
  let value = format ?? (name ? `example ${name}` : 'example');
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  if (value.length < minLength) value = value.padEnd(minLength, 'x');
  return value.length > maxLength ? value.slice(0, maxLength) : value;
}

function objectExample(schema: Json, walk: Walk): Json {
  const out: Json = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [name, property] of Object.entries(properties)) {
    const value = build(property, name, walk);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function arrayExample(schema: Json, name: string, walk: Walk): unknown[] {
  const item = build(schema.items, name, walk);
  if (item === undefined || schema.maxItems === 0) return [];
  const count = Math.min(maxArrayItems, Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1));
  return Array.from({ length: count }, () => item);
}

function documented(schema: Json): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  return undefined;
}

function combined(schema: Json, name: string, walk: Walk): unknown {
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const parts = schema.allOf.map((part) => build(part, name, walk));
    const objects = parts.filter(isObject);
    return objects.length > 0 ? Object.assign({}, ...objects) : parts.find((p) => p !== undefined);
  }
  for (const key of ['oneOf', 'anyOf']) {
    const list = schema[key];
    if (Array.isArray(list) && list.length > 0) return build(list[0], name, walk);
  }
  return undefined;
}

function typeName(schema: Json): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (typeof type === 'string') return type;
  if (isObject(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function build(schema: unknown, name: string, outer: Walk): unknown {
  if (!isObject(schema) || outer.depth > maxDepth || schema.$circular !== undefined) return undefined;
  const walk: Walk = { ...outer, depth: outer.depth + 1 };
  if (typeof schema.$ref === 'string') {
    if (!walk.root || walk.trail.includes(schema.$ref)) return undefined;
    return build(pointer(walk.root, schema.$ref), name, { ...walk, trail: [...walk.trail, schema.$ref] });
  }
  const given = documented(schema);
  if (given !== undefined) return given;
  const merged = combined(schema, name, walk);
  if (merged !== undefined) return merged;
  switch (typeName(schema)) {
    case 'object':
      return objectExample(schema, walk);
    case 'array':
      return arrayExample(schema, name, walk);
    case 'integer':
      return numberExample(schema, true);
    case 'number':
      return numberExample(schema, false);
    case 'boolean':
      return true;
    case 'string':
      return stringExample(schema, name);
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/**
 * An example value for `schema`; `root` is the whole document, for local `$ref`s (a recursive
 * reference stops where it repeats). `name` is the property or parameter the value is for.
 * @example exampleFor({ type: 'integer', minimum: 1, maximum: 9 }) // 5
 */
export function exampleFor(schema: unknown, options: { root?: Json; name?: string } = {}): unknown {
  return build(schema, options.name ?? '', { root: options.root, trail: [], depth: 0 });
}
