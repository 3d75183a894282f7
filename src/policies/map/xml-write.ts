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
import type { XmlAttribute, XmlElement } from '../../soap/xml.ts';
import { element as newElement } from '../../soap/xml-serialize.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';

/** The map options that shape the XML written (the port's). */
export interface XmlWriteOptions {
  /** `includeEmptyXMLElements`: a null or missing value writes an empty element. */
  includeEmpty: boolean;
  /** `namespaceInheritance`: an element the schema says nothing about takes its parent's namespace. */
  inherit: boolean;
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

/** Writes one property as zero or more elements. */
export function writeElements(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  options: XmlWriteOptions,
): XmlElement[] {
  if (Array.isArray(value)) {
    const itemNode = node?.type === 'array' ? (node.items ?? node) : node;
    const named =
      node?.type === 'array' && node.items !== undefined
        ? { ...itemNode!, xml: { ...itemNode!.xml, ...node.xml } }
        : itemNode;
    return value.flatMap((item) => writeElements(key, item, named, parent, options));
  }
  if (value === undefined || value === null) {
    if (!options.includeEmpty) return [];
    return [placeElement(key, node, parent, options).element];
  }
  const { element, scope } = placeElement(key, node, parent, options);
  if (typeof value !== 'object') {
    element.children.push(scalarText(value));
    return [element];
  }
  const record = value as Record<string, unknown>;
  for (const childKey of orderedKeys(record, node)) {
    const childValue = record[childKey];
    const childNode = node?.properties.get(childKey);
    if (childKey === '$') {
      if (childValue !== undefined && childValue !== null) element.children.push(scalarText(childValue));
    } else if (childKey.startsWith('@') || childNode?.xml.attribute) {
      if (childValue !== undefined && childValue !== null)
        element.attributes.push(attributeFor(childKey, childValue, childNode, scope, element));
    } else {
      element.children.push(...writeElements(childKey, childValue, childNode, scope, options));
    }
  }
  return [element];
}
