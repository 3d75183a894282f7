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
import { isDeclarablePrefix, isXmlName, XmlWriter } from './xml-serialize.ts';
import { XML_NAMESPACE, XmlError } from './xml.ts';
import type { XmlElement } from './xml.ts';

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

/** Checks that a name's prefix has an `@xmlns` declaration in scope (no prefix: always in scope). */
function checkPrefix(name: string, scope: NamespaceScope, what: string): void {
  const colon = name.indexOf(':');
  const prefix = colon < 0 ? '' : name.slice(0, colon);
  if (prefix !== '' && scope.get(prefix) === undefined)
    throw new XmlError('namespace', `the prefix "${prefix}" of ${what} "${name}" has no @xmlns declaration in scope`);
}

interface Build {
  options: JsonToXmlOptions;
  scope: NamespaceScope;
  /** Writes the XML as the JSON is walked, counting its characters: no element tree is built. */
  writer: XmlWriter;
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

/** The `@name` keys of a record as attributes, their prefixes declared in the element's scope. */
function attributesOf(record: Json | undefined, scope: NamespaceScope): Array<[string, string]> {
  const attributes: Array<[string, string]> = [];
  if (record === undefined) return attributes;
  for (const [key, value] of Object.entries(record)) {
    if (!key.startsWith('@') || key === '@xmlns') continue;
    const name = checkName(key.slice(1));
    checkPrefix(name, scope, 'attribute');
    attributes.push([name, scalarText(value)]);
  }
  return attributes;
}

function writeJson(name: string, value: unknown, build: Build, depth: number): void {
  if (depth > 1000) throw new XmlError('too-deep', 'the JSON nests too deeply to convert');
  if (Array.isArray(value)) {
    for (const item of value) {
      if (Array.isArray(item)) writeList(build.options.unnamedElementName, item, build, depth + 1);
      else writeJson(name, item, build, depth + 1);
    }
    return;
  }
  const record = typeof value === 'object' && value !== null ? (value as Json) : undefined;
  const declarations = declarationsOf(record, build.scope);
  const saved = build.scope.enter(declarations);
  checkPrefix(checkName(name), build.scope, 'element');
  build.writer.start(name, declarations, attributesOf(record, build.scope));
  if (record !== undefined) {
    for (const [key, child] of Object.entries(record)) {
      if (key.startsWith('@')) continue;
      if (key !== '$') writeJson(key, child, build, depth + 1);
      else if (child !== null && child !== undefined) build.writer.text(scalarText(child));
    }
  } else if (value !== null && value !== undefined) build.writer.text(scalarText(value));
  build.writer.end(name);
  build.scope.leave(saved);
}

function writeList(name: string, items: unknown[], build: Build, depth: number): void {
  build.writer.start(checkName(name), {}, []);
  writeJson(build.options.unnamedElementName, items, build, depth);
  build.writer.end(name);
}

/**
 * The XML for a BadgerFish (or plain) JSON value: one top-level property is the root element;
 * several, a list or a scalar are wrapped in `rootElementName` (IBM "JSON to XML"). The text is
 * written as the JSON is walked, so the heap it takes is about the XML's length.
 * @param budget bounds the XML's length, escaping included (a JSON key repeated on every item of a list is written twice per item).
 * @throws XmlError when a name cannot be an XML name, a prefix is not declared, or the XML would exceed the budget.
 */
export function badgerfishToXml(value: unknown, options: JsonToXmlOptions, budget = new ConversionBudget(0)): string {
  const build: Build = { options, scope: new NamespaceScope(), writer: new XmlWriter(budget) };
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
  const keys = record === undefined ? [] : Object.keys(record);
  if (
    record !== undefined &&
    keys.length === 1 &&
    !keys[0].startsWith('@') &&
    keys[0] !== '$' &&
    !Array.isArray(record[keys[0]]) &&
    !options.alwaysOutputRootElement
  )
    writeJson(keys[0], record[keys[0]], build, 1);
  else if (Array.isArray(value)) writeList(options.rootElementName, value, build, 1);
  else writeJson(options.rootElementName, value, build, 1);
  return build.writer.toString();
}
