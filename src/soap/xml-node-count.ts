/**
 * The node bound of every XML parse (DESIGN §6: what a conversion holds is bounded by a small
 * multiple of its input). A node costs a few hundred bytes of heap in the tokeniser's output and
 * the tree whatever its text, so 4 MB of `<a/>` took about 370 MB to convert; a document may
 * therefore hold one node per {@link XML_BYTES_PER_NODE} bytes (at least {@link XML_NODE_FLOOR}),
 * counted on the text before anything is tokenised, so a refusal costs one scan. The SOAP
 * replies, WSDLs and XSDs of test/fixtures/soap have 14–34 bytes per node.
 */
import { XmlError } from './xml-error.ts';

/** Bytes of document per node: the densest documents allowed take at most about 40 bytes of heap per byte to convert. */
export const XML_BYTES_PER_NODE = 8;

/** Nodes any document may hold, however short (256 KiB of `<a/>`): small documents are never refused for their density. */
export const XML_NODE_FLOOR = 65_536;

/** The nodes a document of `bytes` bytes may hold. */
export function xmlNodeLimit(bytes: number): number {
  return Math.max(XML_NODE_FLOOR, Math.floor(bytes / XML_BYTES_PER_NODE));
}

/** @throws XmlError `too-many-nodes` when a document of `bytes` bytes holds more nodes than {@link xmlNodeLimit}. */
export function checkXmlNodes(text: string, bytes: number): void {
  const limit = xmlNodeLimit(bytes);
  if (countXmlNodes(text, limit) <= limit) return;
  const rule = `one per ${XML_BYTES_PER_NODE} bytes, at least ${XML_NODE_FLOOR}`;
  throw new XmlError('too-many-nodes', `the ${bytes}-byte XML document has more than ${limit} nodes (${rule})`);
}

const SLASH = 0x2f;
const QUESTION = 0x3f;
const EQUALS = 0x3d;
const GREATER = 0x3e;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;

/**
 * Counts what the parser will make nodes of: start tags, attributes (namespace declarations
 * included), comments, CDATA sections, processing instructions and the runs of text between
 * them. Stops once past `limit`. Text that is not well-formed is counted as far as it can be;
 * the parser refuses it.
 */
export function countXmlNodes(text: string, limit: number): number {
  let nodes = 0;
  let from = 0;
  while (from < text.length && nodes <= limit) {
    const at = text.indexOf('<', from);
    if (at !== from) nodes += 1;
    if (at < 0) break;
    const next = text.charCodeAt(at + 1);
    let end: number;
    if (next === SLASH) end = endOf(text, '>', at + 2);
    else {
      nodes += 1;
      if (text.startsWith('<!--', at)) end = endOf(text, '-->', at + 4);
      else if (text.startsWith('<![CDATA[', at)) end = endOf(text, ']]>', at + 9);
      else if (next === QUESTION) end = endOf(text, '?>', at + 2);
      else {
        const tag = scanTag(text, at + 1);
        nodes += tag.attributes;
        end = tag.end;
      }
    }
    if (end < 0) break;
    from = end + 1;
  }
  return nodes;
}

/** The index of the last character of `marker` at or after `from`, -1 if none. */
function endOf(text: string, marker: string, from: number): number {
  const at = text.indexOf(marker, from);
  return at < 0 ? -1 : at + marker.length - 1;
}

/** A start tag's end (-1 if none) and its attributes: each has one `=` outside a quoted value. */
function scanTag(text: string, from: number): { end: number; attributes: number } {
  let attributes = 0;
  for (let i = from; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === QUOTE || char === APOSTROPHE) {
      i = text.indexOf(char === QUOTE ? '"' : "'", i + 1);
      if (i < 0) break;
    } else if (char === EQUALS) attributes += 1;
    else if (char === GREATER) return { end: i, attributes };
  }
  return { end: -1, attributes };
}
