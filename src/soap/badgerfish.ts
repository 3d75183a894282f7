/**
 * BadgerFish, the XML↔JSON convention of API Connect's xml-to-json and json-to-xml policies
 * (IBM "XML to JSON": "a simple convention, based on BadgerFish … The XML content is
 * preserved, including the attributes and namespaces"; rules from badgerfish.ning.com):
 *
 * 1. element names become properties (prefix kept: `"alice:bob"`); 2. text goes in `$`;
 * 3. nested elements become nested properties; 4. repeated elements become a list;
 * 5. attributes are `@name`; 6. the namespaces active on an element go in its `@xmlns`
 * (7. the default one as `@xmlns.$`, 8. the others by prefix). Every value is a string.
 *
 * `relaxedBadgerFish` (Portico's reading of DataPower's relaxed form): a text-only element
 * without attributes is its plain string, and `@xmlns` appears only where a namespace is
 * declared, not repeated on every descendant.
 */
import { childElements, element as newElement, isXmlName, textOf, XML_NAMESPACE, XmlError } from './xml.ts';
import type { XmlAttribute, XmlElement } from './xml.ts';

export type Convention = 'badgerFish' | 'relaxedBadgerFish';

type Json = Record<string, unknown>;

function namespacesJson(scope: ReadonlyMap<string, string>): Json | undefined {
  const out: Json = {};
  for (const [prefix, uri] of scope) {
    if (prefix === 'xml' && uri === XML_NAMESPACE) continue;
    out[prefix === '' ? '$' : prefix] = uri;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function convert(xml: XmlElement, inherited: ReadonlyMap<string, string>, relaxed: boolean): unknown {
  let scope = inherited;
  if (Object.keys(xml.declarations).length > 0) scope = new Map([...inherited, ...Object.entries(xml.declarations)]);
  const out: Json = {};
  const children = childElements(xml);
  const text = textOf(xml);
  const hasText = children.length === 0 ? text !== '' : text.trim() !== '';
  if (relaxed && children.length === 0 && xml.attributes.length === 0 && Object.keys(xml.declarations).length === 0) return text;
  if (hasText) out.$ = children.length === 0 ? text : text.trim();
  for (const child of children) {
    const value = convert(child, scope, relaxed);
    const existing = out[child.name];
    if (existing === undefined) out[child.name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[child.name] = [existing, value];
  }
  for (const attribute of xml.attributes) out[`@${attribute.name}`] = attribute.value;
  const namespaces = namespacesJson(relaxed ? new Map(Object.entries(xml.declarations)) : scope);
  if (namespaces !== undefined) out['@xmlns'] = namespaces;
  return out;
}

/** The BadgerFish JSON of a document's root element: `{ "<root>": { … } }`. */
export function xmlToBadgerfish(root: XmlElement, convention: Convention = 'badgerFish'): Json {
  return { [root.name]: convert(root, new Map(), convention === 'relaxedBadgerFish') };
}

export interface JsonToXmlOptions {
  /** Root element wrapped around a result that is not one element (IBM json-to-xml `root-element-name`). */
  rootElementName: string;
  /** Wrap even a single-element result (IBM `always-output-root-element`). */
  alwaysOutputRootElement: boolean;
  /** Element name for list items that have no name of their own (IBM `unnamed-element-name`). */
  unnamedElementName: string;
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function checkName(name: string): string {
  if (!isXmlName(name)) throw new XmlError('malformed', `"${name}" cannot be an XML name`);
  return name;
}

function resolveName(name: string, scope: ReadonlyMap<string, string>, what: string): { prefix: string; local: string; namespace: string } {
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? '' : name.slice(0, colon);
  const namespace = scope.get(prefix);
  if (prefix !== '' && namespace === undefined) throw new XmlError('namespace', `the prefix "${prefix}" of ${what} "${name}" has no @xmlns declaration in scope`);
  return { prefix, local: colon < 0 ? name : name.slice(colon + 1), namespace: namespace ?? '' };
}

function build(name: string, value: unknown, scope: ReadonlyMap<string, string>, options: JsonToXmlOptions, depth: number): XmlElement[] {
  if (depth > 1000) throw new XmlError('too-deep', 'the JSON nests too deeply to convert');
  if (Array.isArray(value)) return value.flatMap((item) => (Array.isArray(item) ? [wrapList(options.unnamedElementName, item, scope, options, depth + 1)] : build(name, item, scope, options, depth + 1)));
  const record = typeof value === 'object' && value !== null ? (value as Json) : undefined;
  const declarations: Record<string, string> = {};
  const xmlns = record?.['@xmlns'];
  if (typeof xmlns === 'object' && xmlns !== null) {
    for (const [prefix, uri] of Object.entries(xmlns as Json)) {
      const key = prefix === '$' ? '' : prefix;
      // BadgerFish repeats active namespaces on every element: declare only what changes.
      if (scope.get(key) !== String(uri)) declarations[key] = String(uri);
    }
  }
  const inner = Object.keys(declarations).length === 0 ? scope : new Map([...scope, ...Object.entries(declarations)]);
  const placed = resolveName(checkName(name), inner, 'element');
  const element = newElement(name, { namespace: placed.namespace, declarations });
  if (record === undefined) {
    if (value !== null && value !== undefined) element.children.push(scalarText(value));
    return [element];
  }
  for (const [key, child] of Object.entries(record)) {
    if (key === '@xmlns') continue;
    if (key === '$') {
      if (child !== null && child !== undefined) element.children.push(scalarText(child));
    } else if (key.startsWith('@')) {
      const attributeName = checkName(key.slice(1));
      const attribute = resolveName(attributeName, inner, 'attribute');
      const entry: XmlAttribute = { name: attributeName, prefix: attribute.prefix, local: attribute.local, namespace: attribute.prefix === '' ? '' : attribute.namespace, value: scalarText(child) };
      element.attributes.push(entry);
    } else {
      element.children.push(...build(key, child, inner, options, depth + 1));
    }
  }
  return [element];
}

function wrapList(name: string, items: unknown[], scope: ReadonlyMap<string, string>, options: JsonToXmlOptions, depth: number): XmlElement {
  const wrapper = newElement(checkName(name));
  wrapper.children.push(...build(options.unnamedElementName, items, scope, options, depth));
  return wrapper;
}

/**
 * The XML for a BadgerFish (or plain) JSON value: one top-level property is the root element;
 * several, a list or a scalar are wrapped in `rootElementName` (IBM "JSON to XML").
 * @throws XmlError when a name cannot be an XML name or a prefix is not declared.
 */
export function badgerfishToXml(value: unknown, options: JsonToXmlOptions): XmlElement {
  const rootScope = new Map([['xml', XML_NAMESPACE]]);
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  const keys = record === undefined ? [] : Object.keys(record);
  if (record !== undefined && keys.length === 1 && !keys[0].startsWith('@') && keys[0] !== '$' && !Array.isArray(record[keys[0]]) && !options.alwaysOutputRootElement) {
    return build(keys[0], record[keys[0]], rootScope, options, 1)[0];
  }
  if (Array.isArray(value)) return wrapList(options.rootElementName, value, rootScope, options, 1);
  return build(options.rootElementName, value, rootScope, options, 1)[0];
}
