/**
 * The one XML serialiser: {@link XmlWriter} writes text as a conversion walks its JSON, names
 * checked and text escaped, and no element tree in between: a tree costs a few hundred bytes of
 * heap per element whatever its text, so 4 MB of `{"a":[1,1,…]}` took 1.3 GB as a tree and takes
 * about its output's length as text (docs/security.md, XML amplification).
 */
import { DEFAULT_MAX_DEPTH, XML_NAMESPACE, XmlError } from './xml.ts';
import type { ConversionBudget } from './xml-budget.ts';

/** Escapes character data (XML 1.0 §2.4). */
export function escapeText(text: string): string {
  // Most text has nothing to escape: three scans are cheaper than a regular expression call.
  if (text.indexOf('&') < 0 && text.indexOf('<') < 0 && text.indexOf('>') < 0) return text;
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

/** Pieces gathered before they are joined into one flat chunk: a few KB, so no long chain of small strings stays alive. */
const PIECES_PER_CHUNK = 4096;

/**
 * Writes one XML document (no declaration) from start, text and end events. Every name and
 * prefix is checked where it is written and text is escaped, so no value can add markup; every
 * character written counts against the budget, escaping included. One root element only.
 */
export class XmlWriter {
  private readonly chunks: string[] = [];
  private pieces: string[] = [];
  /** Whether the last start tag still waits for its `>` (an element without content ends in `/>`). */
  private openTag = false;
  private depth = 0;
  private rootWritten = false;

  constructor(private readonly budget?: ConversionBudget) {}

  /** Whether the root element has been written and closed. */
  get complete(): boolean {
    return this.rootWritten && this.depth === 0;
  }

  /** Opens an element: `declarations` are prefix ('' = default) → URI, `attributes` name → value in order. */
  start(name: string, declarations: Record<string, string>, attributes: ReadonlyArray<[string, string]>): void {
    if (this.complete) throw new XmlError('malformed', `a second root element <${name}> cannot be written`);
    if (this.depth >= DEFAULT_MAX_DEPTH * 10) throw new XmlError('too-deep', 'the XML to write nests too deeply');
    if (!isXmlName(name)) throw new XmlError('malformed', `"${name}" is not a valid XML element name`);
    this.closeStartTag();
    this.write('<');
    this.write(name);
    for (const prefix of Object.keys(declarations)) {
      const uri = declarations[prefix];
      // Every caller checks its prefixes; this keeps a prefix from ever carrying markup into the tag.
      if (!isDeclarablePrefix(prefix, uri))
        throw new XmlError('malformed', `"${prefix}" is not a namespace prefix that can be declared`);
      this.write(prefix === '' ? ' xmlns="' : ` xmlns:${prefix}="`);
      this.write(escapeAttribute(uri));
      this.write('"');
    }
    for (const [attribute, value] of attributes) {
      if (!isXmlName(attribute)) throw new XmlError('malformed', `"${attribute}" is not a valid XML attribute name`);
      this.write(' ');
      this.write(attribute);
      this.write('="');
      this.write(escapeAttribute(value));
      this.write('"');
    }
    this.openTag = true;
    this.depth += 1;
    this.rootWritten = true;
  }

  /** Character data inside the open element (an empty string still gives the element an end tag). */
  text(value: string): void {
    this.closeStartTag();
    this.write(escapeText(value));
  }

  /** Closes the element opened last: `/>` when it has no content. */
  end(name: string): void {
    this.depth -= 1;
    if (this.openTag) {
      this.openTag = false;
      this.write('/>');
    } else {
      this.write('</');
      this.write(name);
      this.write('>');
    }
  }

  /** The document written. */
  toString(): string {
    this.chunks.push(this.pieces.join(''));
    this.pieces = [];
    return this.chunks.join('');
  }

  private closeStartTag(): void {
    if (!this.openTag) return;
    this.openTag = false;
    this.write('>');
  }

  private write(piece: string): void {
    this.budget?.spend(piece.length);
    this.pieces.push(piece);
    if (this.pieces.length >= PIECES_PER_CHUNK) {
      this.chunks.push(this.pieces.join(''));
      this.pieces = [];
    }
  }
}
