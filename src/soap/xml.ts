/**
 * Safe XML for every XML entry point of Portico (the map policy's XML codec, xml-to-json,
 * json-to-xml, the WSDL importer): one parser (this file) and one serialiser (xml-serialize.ts);
 * conversions count what they write against a {@link ConversionBudget} (xml-budget.ts).
 *
 * Safety rules (DESIGN §6; OWASP "XML External Entity Prevention"): a document type
 * declaration is refused outright, so no external entity (XXE) is ever resolved and no entity
 * is ever expanded (billion laughs); only the five predefined entities and character
 * references are decoded (XML 1.0 §4.6, §4.1); the input size, its nodes per byte
 * (xml-node-count.ts) and the element nesting depth are capped before and while parsing.
 * fast-xml-parser (≥ 5.12) does the tokenising with its own entity processing switched off.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { XmlError } from './xml-error.ts';
import { checkXmlNodes } from './xml-node-count.ts';

/** XML namespace of the `xml:` prefix (Namespaces in XML 1.0 §3). */
export const XML_NAMESPACE = 'http://www.w3.org/XML/1998/namespace';

/** Default cap on element nesting. */
export const DEFAULT_MAX_DEPTH = 100;

/** Default cap on the attributes plus namespace declarations of one element (DataPower's XML manager default). */
export const DEFAULT_MAX_ATTRIBUTES = 128;

/** Default cap on input size: 4 MiB, the gateway's default request limit. */
export const DEFAULT_MAX_XML_BYTES = 4 * 1024 * 1024;

/** An attribute with its namespace resolved. */
export interface XmlAttribute {
  /** Qualified name as written, e.g. `xsi:type`. */
  name: string;
  prefix: string;
  local: string;
  /** Namespace URI, '' for an unprefixed attribute (Namespaces in XML §6.2). */
  namespace: string;
  value: string;
}

/** An element with its namespace resolved; namespace declarations are kept apart from attributes. */
export interface XmlElement {
  name: string;
  prefix: string;
  local: string;
  namespace: string;
  readonly attributes: readonly XmlAttribute[];
  /** `xmlns` / `xmlns:p` declared on this element: prefix ('' = default) → URI. */
  readonly declarations: Readonly<Record<string, string>>;
  readonly children: readonly XmlNode[];
}

/** Element or character data. */
export type XmlNode = XmlElement | string;

export { XmlError } from './xml-error.ts';
export type { XmlErrorCode } from './xml-error.ts';

export interface XmlLimits {
  /** Largest accepted input, in bytes (UTF-8). */
  maxBytes?: number;
  /** Deepest accepted element nesting. */
  maxDepth?: number;
  /** Most attributes plus namespace declarations accepted on one element. */
  maxAttributes?: number;
}

// Entities decode only here, never in fast-xml-parser (its processEntities is off).
const predefinedEntities: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined entities and character references; any other entity is refused. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&([^;&\s]{0,32});?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new XmlError('entity', `an "&" must start an entity reference ("${whole}")`);
    if (Object.hasOwn(predefinedEntities, name)) return predefinedEntities[name];
    const numeric = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (numeric) {
      const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : parseInt(numeric[2], 10);
      if (!isXmlChar(code)) throw new XmlError('entity', `character reference &${name}; is not an XML character`);
      return String.fromCodePoint(code);
    }
    throw new XmlError(
      'entity',
      `entity &${name}; is not declared (only &lt; &gt; &amp; &quot; &apos; and character references are accepted)`,
    );
  });
}

// XML 1.0 §2.2 Char production.
function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

const textKey = '#text';
const cdataKey = '#cdata';
const attributesKey = ':@';

function tokenizer(maxDepth: number): XMLParser {
  return new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    processEntities: false,
    htmlEntities: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    cdataPropName: cdataKey,
    maxNestedTags: maxDepth,
    // The tokens are only read through own keys, so `toString` & co. keep their names (the
    // default renames them `__toString`); `__proto__`, `constructor` and `prototype` stay refused.
    onDangerousProperty: (name: string) => name,
  });
}

const tokenizers = new Map<number, XMLParser>();

function tokenizerFor(maxDepth: number): XMLParser {
  let parser = tokenizers.get(maxDepth);
  if (parser === undefined) {
    parser = tokenizer(maxDepth);
    tokenizers.set(maxDepth, parser);
  }
  return parser;
}

/** Checks size and node count and refuses DTDs before anything tokenises the text. */
function screen(input: string | Buffer, maxBytes: number): string {
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.length;
  if (size > maxBytes)
    throw new XmlError('too-large', `the XML document is ${size} bytes, more than the limit of ${maxBytes}`);
  const text = (typeof input === 'string' ? input : input.toString('utf8')).replace(/^\uFEFF/, '');
  // A DOCTYPE is how both XXE and entity expansion start: refused wherever it appears.
  if (/<!DOCTYPE/i.test(text))
    throw new XmlError(
      'doctype',
      'a document type declaration (<!DOCTYPE …>) is not accepted: DTDs and entities are refused (XXE)',
    );
  if (/<!ENTITY/i.test(text)) throw new XmlError('doctype', 'entity declarations (<!ENTITY …>) are not accepted');
  // Not an XML character (§2.2), written or referenced (`&#0;` is refused where entities are decoded);
  // the tokeniser would keep it, and no store can hold a name or title with it.
  const nul = text.indexOf('\0');
  if (nul >= 0) throw new XmlError('malformed', `U+0000 at offset ${nul} is not an XML character`);
  checkXmlNodes(text, size);
  return text;
}

type Token = Record<string, unknown>;

/**
 * The prefixes in scope while a tree is walked depth first: one map, changed on entering an
 * element that declares a prefix and restored on leaving it, so no element copies its
 * ancestors' declarations (a root with many prefixes over many children costs nothing extra).
 */
export class NamespaceScope {
  private readonly bindings = new Map<string, string>();

  constructor(initial: Record<string, string> = { xml: XML_NAMESPACE }) {
    for (const [prefix, uri] of Object.entries(initial)) this.bindings.set(prefix, uri);
  }

  /** The URI bound to a prefix ('' = the default namespace). */
  get(prefix: string): string | undefined {
    return this.bindings.get(prefix);
  }

  /** Binds `declarations`; returns what {@link NamespaceScope.leave} needs to restore the outer scope. */
  enter(declarations: Record<string, string>): Array<[string, string | undefined]> {
    const saved: Array<[string, string | undefined]> = [];
    for (const [prefix, uri] of Object.entries(declarations)) {
      saved.push([prefix, this.bindings.get(prefix)]);
      this.bindings.set(prefix, uri);
    }
    return saved;
  }

  /** Undoes an {@link NamespaceScope.enter}. */
  leave(saved: Array<[string, string | undefined]>): void {
    for (let i = saved.length - 1; i >= 0; i--) {
      const [prefix, uri] = saved[i];
      if (uri === undefined) this.bindings.delete(prefix);
      else this.bindings.set(prefix, uri);
    }
  }
}

/** `p:local` → prefix and local name (no prefix: ''). */
export function splitQName(name: string): { prefix: string; local: string } {
  const colon = name.indexOf(':');
  return colon < 0 ? { prefix: '', local: name } : { prefix: name.slice(0, colon), local: name.slice(colon + 1) };
}

function resolvePrefix(scope: NamespaceScope, prefix: string, what: string): string {
  const uri = scope.get(prefix);
  if (uri === undefined) {
    if (prefix === '') return '';
    throw new XmlError('namespace', `the prefix "${prefix}" of ${what} is not declared`);
  }
  return uri;
}

interface Walk {
  scope: NamespaceScope;
  maxDepth: number;
  maxAttributes: number;
}

function declarationsOf(raw: Record<string, string>, name: string, walk: Walk): Record<string, string> {
  const keys = Object.keys(raw);
  if (keys.length > walk.maxAttributes) {
    const found = `element <${name}> has ${keys.length} attributes and namespace declarations`;
    throw new XmlError('too-many-attributes', `${found}, more than the limit of ${walk.maxAttributes}`);
  }
  const declarations: Record<string, string> = {};
  for (const key of keys) {
    if (key === 'xmlns') declarations[''] = decodeEntities(raw[key]);
    else if (key.startsWith('xmlns:')) declarations[key.slice(6)] = decodeEntities(raw[key]);
  }
  return declarations;
}

function attributesOf(raw: Record<string, string>, scope: NamespaceScope): XmlAttribute[] {
  const attributes: XmlAttribute[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'xmlns' || key.startsWith('xmlns:')) continue;
    const parts = splitQName(key);
    // Namespaces in XML §6.2: an unprefixed attribute is in no namespace.
    const namespace = parts.prefix === '' ? '' : resolvePrefix(scope, parts.prefix, `attribute ${key}`);
    attributes.push({
      name: key,
      prefix: parts.prefix,
      local: parts.local,
      namespace,
      value: decodeEntities(value),
    });
  }
  return attributes;
}

// Shared by every element without attributes, declarations or children (most of a large
// document's), which would otherwise each hold empty containers of their own.
const none: readonly never[] = Object.freeze([]);
const noDeclarations: Readonly<Record<string, string>> = Object.freeze({});

function elementOf(token: Token, depth: number, walk: Walk): XmlElement {
  if (depth > walk.maxDepth) throw new XmlError('too-deep', `elements nest deeper than ${walk.maxDepth} levels`);
  const name = Object.keys(token).find((key) => key !== attributesKey)!;
  const raw = (token[attributesKey] ?? {}) as Record<string, string>;
  const declarations = declarationsOf(raw, name, walk);
  const saved = walk.scope.enter(declarations);
  const { prefix, local } = splitQName(name);
  const namespace = resolvePrefix(walk.scope, prefix, `element <${name}>`);
  const attributes = attributesOf(raw, walk.scope);
  const tokens = (token[name] ?? []) as Array<Token | undefined>;
  const children: XmlNode[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const child = tokens[i]!;
    // Each token goes once read: the tokens and the tree are never both whole in memory.
    tokens[i] = undefined;
    if (Object.hasOwn(child, textKey)) children.push(decodeEntities(String(child[textKey])));
    else if (Object.hasOwn(child, cdataKey))
      children.push(((child[cdataKey] as Token[]) ?? []).map((part) => String(part[textKey] ?? '')).join(''));
    else if (!Object.keys(child).some((key) => key.startsWith('?'))) children.push(elementOf(child, depth + 1, walk));
  }
  walk.scope.leave(saved);
  return {
    name,
    prefix,
    local,
    namespace,
    // A copy holds exactly its items; an array grown by push holds room for 17 from its first.
    attributes: attributes.length === 0 ? none : attributes.slice(),
    declarations: Object.keys(declarations).length === 0 ? noDeclarations : declarations,
    children: children.length === 0 ? none : children.slice(),
  };
}

/**
 * Parses an XML document into its root element, namespaces resolved.
 * @throws XmlError on a DTD, an undeclared entity, a size or depth over the limits, or text that is not well-formed.
 */
export function parseXml(input: string | Buffer, limits: XmlLimits = {}): XmlElement {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const text = screen(input, limits.maxBytes ?? DEFAULT_MAX_XML_BYTES);
  const valid = XMLValidator.validate(text, { allowBooleanAttributes: false });
  if (valid !== true)
    throw new XmlError(
      'malformed',
      `not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`,
    );
  let tokens: Token[];
  try {
    tokens = tokenizerFor(maxDepth).parse(text) as Token[];
  } catch (error) {
    const message = (error as Error).message;
    if (/nested/i.test(message)) throw new XmlError('too-deep', `elements nest deeper than ${maxDepth} levels`);
    throw new XmlError('malformed', `not well-formed XML: ${message}`);
  }
  const roots = tokens.filter(
    (token) => !Object.keys(token).some((key) => key.startsWith('?') || key === textKey || key === cdataKey),
  );
  if (roots.length !== 1)
    throw new XmlError('malformed', `an XML document needs exactly one root element, found ${roots.length}`);
  const maxAttributes = limits.maxAttributes ?? DEFAULT_MAX_ATTRIBUTES;
  return elementOf(roots[0], 1, { scope: new NamespaceScope(), maxDepth, maxAttributes });
}

/** The child elements of an element. */
export function childElements(element: XmlElement): XmlElement[] {
  return element.children.filter((child): child is XmlElement => typeof child !== 'string');
}

/** The concatenated character data directly inside an element. */
export function textOf(element: XmlElement): string {
  return element.children.filter((child): child is string => typeof child === 'string').join('');
}

/** The first child element with this namespace and local name. */
export function findChild(element: XmlElement, namespace: string, local: string): XmlElement | undefined {
  return childElements(element).find((child) => child.local === local && child.namespace === namespace);
}

/** An attribute's value by local name (and namespace, '' by default). */
export function attributeOf(element: XmlElement, local: string, namespace = ''): string | undefined {
  return element.attributes.find((attribute) => attribute.local === local && attribute.namespace === namespace)?.value;
}
