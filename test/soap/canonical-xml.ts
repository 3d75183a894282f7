/**
 * A small canonical form for comparing XML in tests: elements by namespace URI and local
 * name (prefixes and where namespaces are declared do not matter), attributes sorted,
 * white space between elements dropped. Built on the production parser, so it also proves
 * the parser reads what the gateway writes.
 */
import { parseXml } from '../../src/soap/xml.ts';
import type { XmlElement } from '../../src/soap/xml.ts';

function canonical(element: XmlElement): string {
  const attributes = element.attributes
    .map((a) => `{${a.namespace}}${a.local}="${a.value}"`)
    .sort()
    .join(' ');
  const hasElements = element.children.some((child) => typeof child !== 'string');
  const inner = element.children
    .map((child) => (typeof child === 'string' ? (hasElements ? child.trim() : child) : canonical(child)))
    .join('');
  return `<{${element.namespace}}${element.local}${attributes === '' ? '' : ` ${attributes}`}>${inner}</>`;
}

/** The canonical text of an XML document. */
export function canonicalXml(text: string): string {
  return canonical(parseXml(text));
}
