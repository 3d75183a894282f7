/**
 * The map policy's XML outputs, written from the tree the actions built.
 *
 * Writing (an output): the tree the actions built becomes XML. Each property's element name,
 * namespace and prefix come from the output schema's `xml` objects (OpenAPI "XML Object");
 * a prefix is declared on the first element that uses it. An element the schema says nothing
 * about inherits its parent's namespace and prefix (the map option `namespaceInheritance`,
 * default true, like an XSD with elementFormDefault="qualified"); with the option false it is
 * in no namespace. Properties are written in the schema's order (an XSD sequence's order);
 * `@name` keys and `xml.attribute` properties become attributes, `$` text. A null or missing
 * value writes nothing unless `includeEmptyXMLElements` is true (then an empty element).
 */
import { XmlError } from '../../soap/xml.ts';
import type { XmlWriter } from '../../soap/xml-serialize.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';

/** The map options that shape the XML written (the port's), and where it is written. */
export interface XmlWriteOptions {
  /** `includeEmptyXMLElements`: a null or missing value writes an empty element. */
  includeEmpty: boolean;
  /** `namespaceInheritance`: an element the schema says nothing about takes its parent's namespace. */
  inherit: boolean;
  /**
   * Receives the XML as the tree is walked, no element tree in between; its budget stops the
   * writing past the bound (a key repeated on every item of a list is written twice per item).
   */
  writer: XmlWriter;
}

/** Deeper than this the tree is refused (the writer's own limit is the same). */
const MAX_DEPTH = 1000;

/** Where an element is written: its namespace and prefix, and the prefixes declared above it. */
export interface Scope {
  namespace: string;
  prefix: string;
  /** Prefixes in scope ('' = default namespace). */
  prefixes: ReadonlyMap<string, string>;
}

/** Name and the declarations needed for an element described by `node`, and the scope of its content. */
function placeElement(
  key: string,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  options: XmlWriteOptions,
): { name: string; declarations: Record<string, string>; scope: Scope } {
  const local = node?.xml.name ?? key;
  const namespace = node?.xml.namespace ?? (options.inherit ? parent.namespace : '');
  let prefix = node?.xml.prefix ?? (namespace === parent.namespace ? parent.prefix : '');
  if (namespace === '') prefix = '';
  if (node?.xml.prefix === undefined && namespace !== '' && namespace !== parent.namespace) {
    // A namespace without a prefix: reuse a prefix in scope for it, else make it the default.
    prefix = [...parent.prefixes].find(([, uri]) => uri === namespace)?.[0] ?? '';
  }
  const declarations: Record<string, string> = {};
  if ((parent.prefixes.get(prefix) ?? '') !== namespace) declarations[prefix] = namespace;
  const prefixes =
    Object.keys(declarations).length === 0
      ? parent.prefixes
      : new Map([...parent.prefixes, ...Object.entries(declarations)]);
  const name = prefix === '' ? local : `${prefix}:${local}`;
  return { name, declarations, scope: { namespace, prefix, prefixes } };
}

/** A scalar as element or attribute text; anything else as its JSON. */
export function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/** Keys in the schema's declared order first, then the others as the actions wrote them. */
function orderedKeys(value: Record<string, unknown>, node: XmlSchemaNode | undefined): string[] {
  const keys = Object.keys(value);
  if (node === undefined) return keys;
  const declared = [...node.properties.keys()].filter((key) => Object.hasOwn(value, key));
  return [...declared, ...keys.filter((key) => !node.properties.has(key))];
}

/** Whether a property is written as an attribute: `@name`, or `xml.attribute` in its schema (`$` is always text). */
function isAttribute(key: string, node: XmlSchemaNode | undefined): boolean {
  return key !== '$' && (key.startsWith('@') || node?.properties.get(key)?.xml.attribute === true);
}

/** An attribute for `key` (`@name` or a schema `xml.attribute` property), its prefix added to `declarations` where needed. */
function attributeFor(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  scope: Scope,
  declarations: Record<string, string>,
): [string, string] {
  const local = node?.xml.name ?? key.replace(/^@/, '');
  const namespace = node?.xml.namespace !== undefined && node.xml.prefix !== undefined ? node.xml.namespace : '';
  const prefix = namespace === '' ? '' : node!.xml.prefix!;
  if (prefix !== '' && scope.prefixes.get(prefix) !== namespace) declarations[prefix] = namespace;
  return [prefix === '' ? local : `${prefix}:${local}`, scalarText(value)];
}

/** Writes one object as an element: its attributes in the start tag, then its text and child elements in order. */
function writeRecord(
  record: Record<string, unknown>,
  node: XmlSchemaNode | undefined,
  placed: ReturnType<typeof placeElement>,
  options: XmlWriteOptions,
  depth: number,
): void {
  const keys = orderedKeys(record, node);
  const attributes: Array<[string, string]> = [];
  for (const key of keys) {
    const value = record[key];
    if (value === undefined || value === null || !isAttribute(key, node)) continue;
    attributes.push(attributeFor(key, value, node?.properties.get(key), placed.scope, placed.declarations));
  }
  options.writer.start(placed.name, placed.declarations, attributes);
  for (const key of keys) {
    const value = record[key];
    if (isAttribute(key, node)) continue;
    if (key !== '$') writeElements(key, value, node?.properties.get(key), placed.scope, options, depth + 1);
    else if (value !== undefined && value !== null) options.writer.text(scalarText(value));
  }
  options.writer.end(placed.name);
}

/**
 * Writes one property as zero or more elements.
 * @throws XmlError `too-expansive` past the writer's budget, `too-deep` past {@link MAX_DEPTH}.
 */
export function writeElements(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  options: XmlWriteOptions,
  depth = 1,
): void {
  const { writer } = options;
  // A document has one root: of a list at the top, the first element written is the output.
  if (writer.complete) return;
  if (depth > MAX_DEPTH) throw new XmlError('too-deep', 'the output nests too deeply to write as XML');
  if (Array.isArray(value)) {
    const itemNode = node?.type === 'array' ? (node.items ?? node) : node;
    const named =
      node?.type === 'array' && node.items !== undefined
        ? { ...itemNode!, xml: { ...itemNode!.xml, ...node.xml } }
        : itemNode;
    for (const item of value) writeElements(key, item, named, parent, options, depth + 1);
    return;
  }
  if ((value === undefined || value === null) && !options.includeEmpty) return;
  const placed = placeElement(key, node, parent, options);
  if (typeof value === 'object' && value !== null) {
    writeRecord(value as Record<string, unknown>, node, placed, options, depth);
    return;
  }
  writer.start(placed.name, placed.declarations, []);
  if (value !== undefined && value !== null) writer.text(scalarText(value));
  writer.end(placed.name);
}
