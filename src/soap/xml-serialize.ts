/** The one XML serialiser: element trees built in code or parsed, written with names checked and text escaped. */
import { DEFAULT_MAX_DEPTH, splitQName, XML_NAMESPACE, XmlError } from './xml.ts';
import type { XmlAttribute, XmlElement, XmlNode } from './xml.ts';
import type { ConversionBudget } from './xml-budget.ts';

/** Escapes character data (XML 1.0 §2.4). */
export function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (char) => (char === '&' ? '&amp;' : char === '<' ? '&lt;' : '&gt;'));
}

const attributeEscapes: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\r': '&#13;',
  '\n': '&#10;',
  '\t': '&#9;',
};

/** Escapes an attribute value for double quotes; white space is kept through references (XML 1.0 §3.3.3). */
export function escapeAttribute(text: string): string {
  return text.replace(/[&<>"\r\n\t]/g, (char) => attributeEscapes[char]);
}

/** A new element for building; `declarations` as given (the serialiser adds none of its own). */
export function element(
  name: string,
  options: {
    namespace?: string;
    attributes?: XmlAttribute[];
    declarations?: Record<string, string>;
    children?: XmlNode[];
  } = {},
): XmlElement {
  const { prefix, local } = splitQName(name);
  return {
    name,
    prefix,
    local,
    namespace: options.namespace ?? '',
    attributes: options.attributes ?? [],
    declarations: options.declarations ?? {},
    children: options.children ?? [],
  };
}

/**
 * Serialises an element tree (no XML declaration unless asked); names are checked, text escaped.
 * With a `budget`, the characters written count against it (escaping included).
 */
export function serializeXml(
  root: XmlElement,
  options: { declaration?: boolean; budget?: ConversionBudget } = {},
): string {
  const parts: string[] = options.declaration ? ['<?xml version="1.0" encoding="UTF-8"?>'] : [];
  write(root, parts, 1, options.budget);
  return parts.join('');
}

// XML 1.0 §2.3 Name (ASCII subset plus any non-ASCII letter), with one optional prefix.
const qualifiedName =
  /^[A-Za-z_\u00C0-\uFFEF][\w.\-\u00B7\u00C0-\uFFEF]*(?::[A-Za-z_\u00C0-\uFFEF][\w.\-\u00B7\u00C0-\uFFEF]*)?$/;

/** Whether `name` can be an element or attribute name. */
export function isXmlName(name: string): boolean {
  return qualifiedName.test(name);
}

/** Whether `name` is an NCName (a name without a colon): what a namespace prefix must be. */
export function isNcName(name: string): boolean {
  return !name.includes(':') && qualifiedName.test(name);
}

/**
 * Whether `prefix` may be declared bound to `uri` (Namespaces in XML 1.0 §3): '' (the default
 * namespace) or an NCName; never `xmlns`, and `xml` only for its own namespace.
 */
export function isDeclarablePrefix(prefix: string, uri: string): boolean {
  if (prefix === '') return true;
  if (prefix === 'xmlns') return false;
  if (prefix === 'xml') return uri === XML_NAMESPACE;
  return isNcName(prefix);
}

function openTag(node: XmlElement): string {
  let tag = `<${node.name}`;
  for (const [prefix, uri] of Object.entries(node.declarations)) {
    // Every writer checks its prefixes; this keeps a prefix from ever carrying markup into the tag.
    if (!isDeclarablePrefix(prefix, uri))
      throw new XmlError('malformed', `"${prefix}" is not a namespace prefix that can be declared`);
    tag += ` ${prefix === '' ? 'xmlns' : `xmlns:${prefix}`}="${escapeAttribute(uri)}"`;
  }
  for (const attribute of node.attributes) {
    if (!isXmlName(attribute.name))
      throw new XmlError('malformed', `"${attribute.name}" is not a valid XML attribute name`);
    tag += ` ${attribute.name}="${escapeAttribute(attribute.value)}"`;
  }
  return node.children.length === 0 ? `${tag}/>` : `${tag}>`;
}

function write(node: XmlElement, parts: string[], depth: number, budget: ConversionBudget | undefined): void {
  if (depth > DEFAULT_MAX_DEPTH * 10) throw new XmlError('too-deep', 'the tree to serialise nests too deeply');
  if (!isXmlName(node.name)) throw new XmlError('malformed', `"${node.name}" is not a valid XML element name`);
  const tag = openTag(node);
  budget?.spend(tag.length);
  parts.push(tag);
  if (node.children.length === 0) return;
  for (const child of node.children) {
    if (typeof child !== 'string') write(child, parts, depth + 1, budget);
    else {
      const text = escapeText(child);
      budget?.spend(text.length);
      parts.push(text);
    }
  }
  budget?.spend(node.name.length + 3);
  parts.push('</', node.name, '>');
}
