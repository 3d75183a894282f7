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
import { childElements, NamespaceScope, textOf } from './xml.ts';
import { ConversionBudget } from './xml-budget.ts';
import { element as newElement, isDeclarablePrefix, isXmlName } from './xml-serialize.ts';
import { XML_NAMESPACE, XmlError } from './xml.ts';
import type { XmlAttribute, XmlElement, XmlNode } from './xml.ts';

export type Convention = 'badgerFish' | 'relaxedBadgerFish';

type Json = Record<string, unknown>;

/**
 * The `@xmlns` an element writes and the characters it costs (`"@xmlns":{…},`). Elements that
 * declare nothing share their parent's: one object per declaring element, never one per element.
 */
interface NamespacesJson {
  json: Json | undefined;
  length: number;
}

const noNamespaces: NamespacesJson = { json: undefined, length: 0 };

function namespacesJson(base: Json | undefined, declarations: Record<string, string>, budget: ConversionBudget) {
  const out: Json = { ...base };
  for (const [prefix, uri] of Object.entries(declarations)) {
    if (prefix === 'xml' && uri === XML_NAMESPACE) continue;
    out[prefix === '' ? '$' : prefix] = uri;
  }
  if (Object.keys(out).length === 0) return noNamespaces;
  const length = JSON.stringify(out).length + '"@xmlns":,'.length;
  budget.spend(length);
  return { json: out, length };
}

/** Sets an own property even for `__proto__` (the tokeniser refuses that name; the tree does not rely on it). */
function setOwn(out: Json, key: string, value: unknown): void {
  if (key !== '__proto__') out[key] = value;
  else Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Adds a child's value under its name: a second one with the same name makes a list (rule 4). */
function addChild(out: Json, key: string, value: unknown, budget: ConversionBudget): void {
  const existing = Object.hasOwn(out, key) ? out[key] : undefined;
  if (existing === undefined) {
    budget.spend(key.length + '"":,'.length);
    setOwn(out, key, value);
  } else if (Array.isArray(existing)) {
    budget.spend(1);
    existing.push(value);
  } else {
    budget.spend('[,]'.length);
    setOwn(out, key, [existing, value]);
  }
}

function textValue(text: string, budget: ConversionBudget): string {
  budget.spend(JSON.stringify(text).length);
  return text;
}

interface Conversion {
  relaxed: boolean;
  budget: ConversionBudget;
}

function convert(xml: XmlElement, inherited: NamespacesJson, conversion: Conversion): unknown {
  const { relaxed, budget } = conversion;
  const declares = Object.keys(xml.declarations).length > 0;
  const children = childElements(xml);
  const text = textOf(xml);
  if (relaxed && children.length === 0 && xml.attributes.length === 0 && !declares) return textValue(text, budget);
  // BadgerFish rule 6 repeats the namespaces in scope on every element; relaxed writes only the declared ones.
  const base = relaxed ? undefined : inherited.json;
  const namespaces = declares ? namespacesJson(base, xml.declarations, budget) : relaxed ? noNamespaces : inherited;
  if (!declares) budget.spend(namespaces.length);
  const out: Json = {};
  budget.spend('{}'.length);
  const hasText = children.length === 0 ? text !== '' : text.trim() !== '';
  if (hasText) {
    budget.spend('"$":,'.length);
    out.$ = textValue(children.length === 0 ? text : text.trim(), budget);
  }
  for (const child of children) addChild(out, child.name, convert(child, namespaces, conversion), budget);
  for (const attribute of xml.attributes) {
    budget.spend(attribute.name.length + '"@":,'.length);
    out[`@${attribute.name}`] = textValue(attribute.value, budget);
  }
  if (namespaces.json !== undefined) out['@xmlns'] = namespaces.json;
  return out;
}

/**
 * The BadgerFish JSON of a document's root element: `{ "<root>": { … } }`. Elements in the same
 * namespace scope share one `@xmlns` object.
 * @param budget bounds the JSON's length (by default to {@link ConversionBudget}'s floor).
 * @throws XmlError `too-expansive` when the JSON would be longer than the budget allows.
 */
export function xmlToBadgerfish(
  root: XmlElement,
  convention: Convention = 'badgerFish',
  budget = new ConversionBudget(0),
): Json {
  const out: Json = {};
  budget.spend(root.name.length + '{"":}'.length);
  setOwn(out, root.name, convert(root, noNamespaces, { relaxed: convention === 'relaxedBadgerFish', budget }));
  return out;
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

function resolveName(name: string, scope: NamespaceScope, what: string) {
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? '' : name.slice(0, colon);
  const namespace = scope.get(prefix);
  if (prefix !== '' && namespace === undefined)
    throw new XmlError('namespace', `the prefix "${prefix}" of ${what} "${name}" has no @xmlns declaration in scope`);
  return { prefix, local: colon < 0 ? name : name.slice(colon + 1), namespace: namespace ?? '' };
}

interface Build {
  options: JsonToXmlOptions;
  scope: NamespaceScope;
  /** Counts the XML's characters as elements are built, before the tree can grow past the bound. */
  budget: ConversionBudget;
}

/** Characters an element costs before its content: `<name>` and `</name>`. */
function tagLength(name: string): number {
  return 2 * name.length + '<></>'.length;
}

function declarationsOf(record: Json | undefined, scope: NamespaceScope): Record<string, string> {
  const declarations: Record<string, string> = {};
  const xmlns = record?.['@xmlns'];
  if (typeof xmlns !== 'object' || xmlns === null) return declarations;
  for (const [prefix, uri] of Object.entries(xmlns as Json)) {
    // `$` is the default namespace; any other key must be a prefix that can be declared (not markup).
    const key = prefix === '$' ? '' : prefix;
    const value = String(uri);
    if (prefix === '' || !isDeclarablePrefix(key, value))
      throw new XmlError('malformed', `"${prefix}" cannot be a namespace prefix in @xmlns`);
    if (key !== '' && value === '')
      throw new XmlError('malformed', `the prefix "${prefix}" in @xmlns cannot be bound to an empty namespace`);
    // BadgerFish repeats active namespaces on every element: declare only what changes.
    if (scope.get(key) !== value) declarations[key] = value;
  }
  return declarations;
}

function attributeOf(key: string, value: unknown, build: Build): XmlAttribute {
  const name = checkName(key.slice(1));
  const placed = resolveName(name, build.scope, 'attribute');
  const text = scalarText(value);
  build.budget.spend(name.length + text.length + ' =""'.length);
  const namespace = placed.prefix === '' ? '' : placed.namespace;
  return { name, prefix: placed.prefix, local: placed.local, namespace, value: text };
}

/** Appends one by one: `push(...items)` passes every item as an argument and overflows the stack on a long list. */
function appendAll(target: XmlNode[], items: readonly XmlNode[]): void {
  for (const item of items) target.push(item);
}

function fill(element: XmlElement, record: Json, build: Build, depth: number): void {
  for (const [key, child] of Object.entries(record)) {
    if (key === '@xmlns') continue;
    if (key === '$') {
      if (child !== null && child !== undefined) element.children.push(textNode(child, build));
    } else if (key.startsWith('@')) {
      element.attributes.push(attributeOf(key, child, build));
    } else {
      appendAll(element.children, convertJson(key, child, build, depth + 1));
    }
  }
}

function textNode(value: unknown, build: Build): string {
  const text = scalarText(value);
  build.budget.spend(text.length);
  return text;
}

function convertJson(name: string, value: unknown, build: Build, depth: number): XmlElement[] {
  if (depth > 1000) throw new XmlError('too-deep', 'the JSON nests too deeply to convert');
  if (Array.isArray(value)) {
    return value.flatMap((item) =>
      Array.isArray(item)
        ? [wrapList(build.options.unnamedElementName, item, build, depth + 1)]
        : convertJson(name, item, build, depth + 1),
    );
  }
  const record = typeof value === 'object' && value !== null ? (value as Json) : undefined;
  const declarations = declarationsOf(record, build.scope);
  const saved = build.scope.enter(declarations);
  const placed = resolveName(checkName(name), build.scope, 'element');
  const element = newElement(name, { namespace: placed.namespace, declarations });
  build.budget.spend(tagLength(name) + JSON.stringify(declarations).length);
  if (record !== undefined) fill(element, record, build, depth);
  else if (value !== null && value !== undefined) element.children.push(textNode(value, build));
  build.scope.leave(saved);
  return [element];
}

function wrapList(name: string, items: unknown[], build: Build, depth: number): XmlElement {
  const wrapper = newElement(checkName(name));
  build.budget.spend(tagLength(name));
  appendAll(wrapper.children, convertJson(build.options.unnamedElementName, items, build, depth));
  return wrapper;
}

/**
 * The XML for a BadgerFish (or plain) JSON value: one top-level property is the root element;
 * several, a list or a scalar are wrapped in `rootElementName` (IBM "JSON to XML").
 * @param budget bounds the XML's length (a JSON key repeated on every item of a list is written once per item).
 * @throws XmlError when a name cannot be an XML name, a prefix is not declared, or the XML would exceed the budget.
 */
export function badgerfishToXml(
  value: unknown,
  options: JsonToXmlOptions,
  budget = new ConversionBudget(0),
): XmlElement {
  const build: Build = { options, scope: new NamespaceScope(), budget };
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  const keys = record === undefined ? [] : Object.keys(record);
  if (
    record !== undefined &&
    keys.length === 1 &&
    !keys[0].startsWith('@') &&
    keys[0] !== '$' &&
    !Array.isArray(record[keys[0]]) &&
    !options.alwaysOutputRootElement
  ) {
    return convertJson(keys[0], record[keys[0]], build, 1)[0];
  }
  if (Array.isArray(value)) return wrapList(options.rootElementName, value, build, 1);
  return convertJson(options.rootElementName, value, build, 1)[0];
}
