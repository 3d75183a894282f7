/**
 * The XML shape an OpenAPI schema describes: for each property, its element (or attribute)
 * name, namespace and prefix from the schema's `xml` object (OpenAPI 2.0 "XML Object": name,
 * namespace, prefix, attribute, wrapped) and its JSON type. API Connect's generated SOAP
 * targets carry their SOAP envelopes this way (`xml: {prefix: soap-env, namespace: …}`).
 *
 * Compiled once per publish. `$ref`s resolve against the API document; a ref met inside an
 * `x-ibm-configuration.targets.<name>` sub-document resolves against that target first (a
 * target is an embedded API whose `#/definitions/x` means its own definitions), then against
 * the whole document.
 */

/** JSON types a schema node may declare (OpenAPI formats written as types are read as JSON types). */
export type SchemaType = 'object' | 'array' | 'number' | 'integer' | 'boolean' | 'string';

/** OpenAPI's XML Object, as far as Portico reads it. */
export interface XmlHints {
  name?: string;
  namespace?: string;
  prefix?: string;
  attribute?: boolean;
  wrapped?: boolean;
}

/** One compiled schema node. */
export interface XmlSchemaNode {
  type: SchemaType | undefined;
  xml: XmlHints;
  /** Property name → node, in the schema's declared order (XSD sequence order). */
  properties: Map<string, XmlSchemaNode>;
  /** Element local name → property name (differs when `xml.name` renames). */
  elements: Map<string, string>;
  /** Attribute local name → property name, for properties with `xml.attribute: true`. */
  attributes: Map<string, string>;
  items: XmlSchemaNode | undefined;
}

/** A `$ref` that does not resolve, or refs that loop without reaching a schema. */
export class SchemaRefError extends Error {
  constructor(
    readonly ref: string,
    reason: string,
  ) {
    super(`$ref ${ref}: ${reason}`);
    this.name = 'SchemaRefError';
  }
}

type Schema = Record<string, unknown>;

// v5 exports write OpenAPI formats as types (`type: float`); read them as JSON types. A Map, so a
// document's `type: constructor` finds nothing rather than Object.prototype's own.
const typeAliases = new Map(
  Object.entries<SchemaType>({
    number: 'number',
    float: 'number',
    double: 'number',
    decimal: 'number',
    integer: 'integer',
    int: 'integer',
    int32: 'integer',
    int64: 'integer',
    long: 'integer',
    boolean: 'boolean',
    string: 'string',
    object: 'object',
    array: 'array',
  }),
);

/** The JSON type a schema's `type` string names (OpenAPI formats such as `float` included). */
export function schemaTypeNamed(declared: string): SchemaType | undefined {
  return typeAliases.get(declared.toLowerCase());
}

const targetPointer = /^#\/x-ibm-configuration\/targets\/[^/]+/;

function readPointer(document: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) return undefined;
    node = (node as Schema)[token];
  }
  return typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Schema) : undefined;
}

/** Resolves `ref` seen under `base` (a target pointer or ''), following chained refs. */
export function resolveSchemaRef(document: Schema, ref: string, base: string): { schema: Schema; base: string } {
  const seen = new Set<string>();
  let current = ref;
  let currentBase = base;
  for (;;) {
    if (seen.has(current)) throw new SchemaRefError(ref, 'refs form a cycle');
    seen.add(current);
    const inTarget =
      currentBase !== '' && current.startsWith('#/') && !current.startsWith(currentBase)
        ? readPointer(document, currentBase + current.slice(1))
        : undefined;
    const found = inTarget ?? readPointer(document, current);
    if (found === undefined) throw new SchemaRefError(ref, 'does not resolve in the API document');
    const absolute = inTarget !== undefined ? currentBase + current.slice(1) : current;
    currentBase = targetPointer.exec(absolute)?.[0] ?? currentBase;
    if (typeof found.$ref !== 'string') return { schema: found, base: currentBase };
    current = found.$ref;
  }
}

function declaredType(schema: Schema): SchemaType | undefined {
  const declared = Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type;
  if (typeof declared === 'string') return schemaTypeNamed(declared);
  if (typeof schema.properties === 'object') return 'object';
  if (typeof schema.items === 'object') return 'array';
  return undefined;
}

function hintsOf(schema: Schema): XmlHints {
  const xml = schema.xml;
  if (typeof xml !== 'object' || xml === null) return {};
  const raw = xml as Record<string, unknown>;
  const hints: XmlHints = {};
  if (typeof raw.name === 'string' && raw.name !== '') hints.name = raw.name;
  if (typeof raw.namespace === 'string' && raw.namespace !== '') hints.namespace = raw.namespace;
  if (typeof raw.prefix === 'string' && raw.prefix !== '') hints.prefix = raw.prefix;
  if (raw.attribute === true) hints.attribute = true;
  if (raw.wrapped === true) hints.wrapped = true;
  return hints;
}

/**
 * Compiles `schema` (inline, or `{$ref}`) into its XML shape.
 * @throws SchemaRefError when a `$ref` does not resolve.
 */
export function compileXmlSchema(schema: Schema | undefined, document: Schema, base = ''): XmlSchemaNode | undefined {
  if (schema === undefined) return undefined;
  const memo = new Map<Schema, XmlSchemaNode>();
  return compileNode(schema, document, base, memo);
}

function compileNode(schema: Schema, document: Schema, base: string, memo: Map<Schema, XmlSchemaNode>): XmlSchemaNode {
  // The referring schema's own `xml` wins over the referenced one's (a property may rename a shared type).
  const ownHints = hintsOf(schema);
  let resolved = schema;
  let innerBase = base;
  if (typeof schema.$ref === 'string')
    ({ schema: resolved, base: innerBase } = resolveSchemaRef(document, schema.$ref, base));
  const cached = memo.get(resolved);
  if (cached !== undefined && Object.keys(ownHints).length === 0) return cached;
  const node: XmlSchemaNode = {
    type: declaredType(resolved),
    xml: { ...hintsOf(resolved), ...ownHints },
    properties: new Map(),
    elements: new Map(),
    attributes: new Map(),
    items: undefined,
  };
  if (Object.keys(ownHints).length === 0) memo.set(resolved, node);
  const properties = resolved.properties;
  if (typeof properties === 'object' && properties !== null) {
    for (const [key, child] of Object.entries(properties as Record<string, Schema>)) {
      if (typeof child !== 'object' || child === null) continue;
      const compiled = compileNode(child, document, innerBase, memo);
      node.properties.set(key, compiled);
      const name = compiled.xml.name ?? key;
      if (compiled.xml.attribute) node.attributes.set(name, key);
      else node.elements.set(name, key);
    }
  }
  if (typeof resolved.items === 'object' && resolved.items !== null && !Array.isArray(resolved.items)) {
    node.items = compileNode(resolved.items as Schema, document, innerBase, memo);
  }
  return node;
}

/** The target pointer a ref lives under (`#/x-ibm-configuration/targets/x`), or ''. */
export function baseOfRef(ref: string | undefined): string {
  return ref === undefined ? '' : (targetPointer.exec(ref)?.[0] ?? '');
}
