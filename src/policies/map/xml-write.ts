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
import type { XmlAttribute, XmlElement, XmlNode } from '../../soap/xml.ts';
import type { ConversionBudget } from '../../soap/xml-budget.ts';
import { element as newElement } from '../../soap/xml-serialize.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';

/** The map options that shape the XML written (the port's), and the bound on how much is written. */
export interface XmlWriteOptions {
  /** `includeEmptyXMLElements`: a null or missing value writes an empty element. */
  includeEmpty: boolean;
  /** `namespaceInheritance`: an element the schema says nothing about takes its parent's namespace. */
  inherit: boolean;
  /**
   * Counts the XML's characters as elements are built (a key repeated on every item of a list
   * is written twice per item), so the tree stops growing past the bound.
   */
  budget: ConversionBudget;
}

/** Deeper than this the tree is refused (the serialiser's own limit is lower still). */
const MAX_DEPTH = 1000;

/** Characters an element costs before its content: `<name>`, `</name>` and its declarations. */
function elementLength(element: XmlElement): number {
  let length = 2 * element.name.length + '<></>'.length;
  for (const [prefix, uri] of Object.entries(element.declarations))
    length += prefix.length + uri.length + ' xmlns:=""'.length;
  return length;
}

/** Appends one by one: `push(...items)` passes every item as an argument and overflows the stack on a long list. */
function appendAll(target: XmlNode[], items: readonly XmlNode[]): void {
  for (const item of items) target.push(item);
}

/** Scalar text for an element, counted against the budget. */
function textNode(value: unknown, options: XmlWriteOptions): string {
  const text = scalarText(value);
  options.budget.spend(text.length);
  return text;
}

/** Where an element is written: its namespace and prefix, and the prefixes declared above it. */
export interface Scope {
  namespace: string;
  prefix: string;
  /** Prefixes in scope ('' = default namespace). */
  prefixes: ReadonlyMap<string, string>;
}

/** Name, namespace and the declarations needed for an element described by `node`. */
function placeElement(
  key: string,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  options: XmlWriteOptions,
): { element: XmlElement; scope: Scope } {
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
  const element = newElement(prefix === '' ? local : `${prefix}:${local}`, { namespace, declarations });
  return { element, scope: { namespace, prefix, prefixes } };
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

/** An attribute for `key` (`@name` or a schema `xml.attribute` property), its prefix declared on `holder` where needed. */
function attributeFor(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  scope: Scope,
  holder: XmlElement,
): XmlAttribute {
  const local = node?.xml.name ?? key.replace(/^@/, '');
  const namespace = node?.xml.namespace !== undefined && node.xml.prefix !== undefined ? node.xml.namespace : '';
  const prefix = namespace === '' ? '' : node!.xml.prefix!;
  if (prefix !== '' && scope.prefixes.get(prefix) !== namespace) holder.declarations[prefix] = namespace;
  return {
    name: prefix === '' ? local : `${prefix}:${local}`,
    prefix,
    local,
    namespace,
    value: scalarText(value),
  };
}

/**
 * Writes one property as zero or more elements.
 * @throws XmlError `too-expansive` when the XML would exceed `options.budget`, `too-deep` past {@link MAX_DEPTH}.
 */
export function writeElements(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  options: XmlWriteOptions,
  depth = 1,
): XmlElement[] {
  if (depth > MAX_DEPTH) throw new XmlError('too-deep', 'the output nests too deeply to write as XML');
  if (Array.isArray(value)) {
    const itemNode = node?.type === 'array' ? (node.items ?? node) : node;
    const named =
      node?.type === 'array' && node.items !== undefined
        ? { ...itemNode!, xml: { ...itemNode!.xml, ...node.xml } }
        : itemNode;
    const elements: XmlElement[] = [];
    for (const item of value) appendAll(elements, writeElements(key, item, named, parent, options, depth + 1));
    return elements;
  }
  if (value === undefined || value === null) {
    if (!options.includeEmpty) return [];
    const { element } = placeElement(key, node, parent, options);
    options.budget.spend(elementLength(element));
    return [element];
  }
  const { element, scope } = placeElement(key, node, parent, options);
  options.budget.spend(elementLength(element));
  if (typeof value !== 'object') {
    element.children.push(textNode(value, options));
    return [element];
  }
  const record = value as Record<string, unknown>;
  for (const childKey of orderedKeys(record, node)) {
    const childValue = record[childKey];
    const childNode = node?.properties.get(childKey);
    if (childKey === '$') {
      if (childValue !== undefined && childValue !== null) element.children.push(textNode(childValue, options));
    } else if (childKey.startsWith('@') || childNode?.xml.attribute) {
      if (childValue === undefined || childValue === null) continue;
      const attribute = attributeFor(childKey, childValue, childNode, scope, element);
      options.budget.spend(attribute.name.length + attribute.value.length + ' =""'.length);
      element.attributes.push(attribute);
    } else {
      appendAll(element.children, writeElements(childKey, childValue, childNode, scope, options, depth + 1));
    }
  }
  return [element];
}
