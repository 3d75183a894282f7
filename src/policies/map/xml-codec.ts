/**
 * The map policy's XML codec (IBM "map": `content: application/xml`).
 *
 * Reading (an input): the XML text is parsed safely (src/soap/xml.ts) into a tree of local
 * names, prefixes dropped, so `input.Envelope.Body.financingResult.paymentAmount` reads a SOAP
 * reply whatever prefixes the backend chose. A repeated element becomes a list (always a list
 * where the schema says `type: array`); an attribute the schema declares (`xml: {attribute:
 * true}`) reads under its property name, any other as `@name`; an element with attributes keeps
 * its text under `$`; `xsi:nil="true"` reads as null. Leaf values are typed by the input schema
 * (`number`, `integer`, `boolean`); without a schema they stay strings.
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
import { PorticoError } from '../../errors.ts';
import { ConversionBudget, childElements, parseXml, serializeXml, textOf, XmlError } from '../../soap/xml.ts';
import { element as newElement } from '../../soap/xml.ts';
import type { XmlAttribute, XmlElement } from '../../soap/xml.ts';
import { faultOf, faultText } from '../../soap/soap-fault.ts';
import { compileXmlSchema, SchemaRefError } from '../../soap/xml-schema-node.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';
import { AssemblyError, PolicyCompileError, RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';
import type { MapCodec, MapPort } from './codec.ts';
import { setOwn } from '../variable-names.ts';

const XSI_NAMESPACE = 'http://www.w3.org/2001/XMLSchema-instance';

/** Requests are bounded by the gateway before the flow runs; 4 MiB is its default limit. */
const requestLimit = 4 * 1024 * 1024;

interface Bound {
  node: XmlSchemaNode | undefined;
  /** The input variable, e.g. `financingOut.body` ('' when unbound). */
  variable: string;
  title: string;
  fromRequest: boolean;
  maxBytes: number;
  includeEmpty: boolean;
  inherit: boolean;
}

/** Turns a value typed by the schema: '299.71' → 299.71 for `number`; unconvertible text stays text. */
function typed(text: string, node: XmlSchemaNode | undefined): unknown {
  switch (node?.type) {
    case 'number':
    case 'integer': {
      const trimmed = text.trim();
      const number = trimmed === '' ? NaN : Number(trimmed);
      return Number.isNaN(number) ? text : number;
    }
    case 'boolean': {
      const trimmed = text.trim();
      if (trimmed === 'true' || trimmed === '1') return true;
      if (trimmed === 'false' || trimmed === '0') return false;
      return text;
    }
    default:
      return text;
  }
}

// Element and attribute names come from the message: `<__proto__>` is kept as an own field
// (as JSON.parse keeps `"__proto__"`), never assigned, which would replace the tree's prototype.
function addValue(tree: Record<string, unknown>, key: string, value: unknown, asList: boolean): void {
  const existing = tree[key];
  if (!Object.hasOwn(tree, key)) setOwn(tree, key, asList ? [value] : value);
  else if (Array.isArray(existing)) existing.push(value);
  else setOwn(tree, key, [existing, value]);
}

function leaf(text: string, node: XmlSchemaNode | undefined, budget: ConversionBudget): unknown {
  budget.spend(text.length + '"",'.length);
  return typed(text, node);
}

/**
 * One element as the map's actions read it. Prefixes and namespaces are dropped, so the tree is
 * about as long as the XML; the budget checks that.
 */
export function readElement(
  xml: XmlElement,
  node: XmlSchemaNode | undefined,
  budget = new ConversionBudget(0),
): unknown {
  if (
    xml.attributes.some(
      (attribute) =>
        attribute.namespace === XSI_NAMESPACE && attribute.local === 'nil' && attribute.value.trim() === 'true',
    )
  )
    return null;
  const tree: Record<string, unknown> = {};
  for (const attribute of xml.attributes) {
    if (attribute.namespace === XSI_NAMESPACE) continue;
    // A declared attribute reads under its property name; any other as `@name`.
    const key = node?.attributes.get(attribute.local) ?? `@${attribute.local}`;
    budget.spend(key.length + '"":'.length);
    const declared = node?.attributes.has(attribute.local) ? node.properties.get(key) : undefined;
    setOwn(tree, key, leaf(attribute.value, declared, budget));
  }
  const children = childElements(xml);
  for (const child of children) {
    const key = node?.elements.get(child.local) ?? child.local;
    const childNode = node?.properties.get(key);
    const isList = childNode?.type === 'array';
    budget.spend(key.length + '"":{}'.length);
    addValue(tree, key, readElement(child, isList ? childNode?.items : childNode, budget), isList);
  }
  const text = textOf(xml);
  if (children.length === 0 && Object.keys(tree).length === 0) return leaf(text, node, budget);
  if (text.trim() === '') return tree;
  tree.$ = children.length === 0 ? leaf(text, node, budget) : leaf(text.trim(), undefined, budget);
  return tree;
}

interface Scope {
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
  bound: Bound,
): { element: XmlElement; scope: Scope } {
  const local = node?.xml.name ?? key;
  const namespace = node?.xml.namespace ?? (bound.inherit ? parent.namespace : '');
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

function scalarText(value: unknown): string {
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
function writeElements(
  key: string,
  value: unknown,
  node: XmlSchemaNode | undefined,
  parent: Scope,
  bound: Bound,
): XmlElement[] {
  if (Array.isArray(value)) {
    const itemNode = node?.type === 'array' ? (node.items ?? node) : node;
    const named =
      node?.type === 'array' && node.items !== undefined
        ? { ...itemNode!, xml: { ...itemNode!.xml, ...node.xml } }
        : itemNode;
    return value.flatMap((item) => writeElements(key, item, named, parent, bound));
  }
  if (value === undefined || value === null) {
    if (!bound.includeEmpty) return [];
    return [placeElement(key, node, parent, bound).element];
  }
  const { element, scope } = placeElement(key, node, parent, bound);
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
      element.children.push(...writeElements(childKey, childValue, childNode, scope, bound));
    }
  }
  return [element];
}

function textOfValue(value: unknown): string | undefined {
  if (value instanceof RawBody) return value.bytes.toString('utf8');
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return typeof value === 'string' ? value : undefined;
}

/**
 * An XML input whose message holds the invoke's own connection-failure object instead of a
 * reply (invoke without ConnectionError in `stop-on-error` lets the flow go on, notes §10.4):
 * there is no XML to map, so the failure is raised here, as the 502/504 it was.
 */
function raiseFailedCall(value: unknown, ctx: FlowContext, bound: Bound): void {
  if (typeof value !== 'object' || value === null || !bound.variable.endsWith('.body')) return;
  const envelope = value as Record<string, unknown>;
  if (typeof envelope.httpCode !== 'string' || typeof envelope.moreInformation !== 'string') return;
  const holder = ctx.get(bound.variable.slice(0, -'.body'.length)) as { status?: { code?: unknown } } | undefined;
  const status = holder?.status?.code;
  if (typeof status !== 'number' || (status !== 502 && status !== 504)) return;
  throw new AssemblyError('ConnectionError', envelope.moreInformation, { status, policy: bound.title });
}

/** An unreadable XML input: the consumer's fault (400) or the backend's (502). */
function readFailure(error: XmlError, bound: Bound): AssemblyError {
  const { title } = bound;
  if (bound.fromRequest) {
    const reason = `${error.message} (policy ${title})`;
    const message = new PorticoError('GW_BAD_REQUEST_BODY', { reason }).message;
    return new AssemblyError('BadRequestError', message, { status: 400, policy: title, cause: error });
  }
  const message = new PorticoError('GW_BAD_BACKEND_RESPONSE', { policy: title, reason: error.message }).message;
  return new AssemblyError('TransformError', message, { status: 502, policy: title, cause: error });
}

function bind(bound: Bound): MapCodec {
  return {
    contentType: 'application/xml',
    decode(value, ctx) {
      const text = textOfValue(value);
      if (text === undefined) {
        if (ctx !== undefined) raiseFailedCall(value, ctx, bound);
        return value;
      }
      if (text.trim() === '') return undefined;
      let root: XmlElement;
      try {
        root = parseXml(text, { maxBytes: bound.maxBytes });
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        throw readFailure(error, bound);
      }
      // A Fault in a reply answered with HTTP 2xx (invoke raises SOAPError itself for 4xx/5xx).
      const fault = faultOf(root);
      if (fault !== undefined)
        throw new AssemblyError('SOAPError', faultText(fault), { status: 500, policy: bound.title });
      const key = bound.node?.elements.get(root.local) ?? root.local;
      const tree: Record<string, unknown> = {};
      try {
        const budget = new ConversionBudget(Buffer.byteLength(text));
        setOwn(tree, key, readElement(root, bound.node?.properties.get(key), budget));
      } catch (error) {
        if (error instanceof XmlError) throw readFailure(error, bound);
        throw error;
      }
      return tree;
    },
    encode(tree) {
      if (tree === undefined || typeof tree === 'string' || Buffer.isBuffer(tree)) return tree;
      if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) return scalarText(tree);
      const keys = Object.keys(tree).filter((key) => (tree as Record<string, unknown>)[key] !== undefined);
      if (keys.length !== 1) {
        throw new AssemblyError(
          'TransformError',
          `map ${bound.title}: an XML output needs exactly one root element, the actions built ${keys.length} (${keys.join(', ')})`,
          { status: 500, policy: bound.title },
        );
      }
      const top: Scope = { namespace: '', prefix: '', prefixes: new Map() };
      try {
        const [root] = writeElements(
          keys[0],
          (tree as Record<string, unknown>)[keys[0]],
          bound.node?.properties.get(keys[0]),
          top,
          bound,
        );
        return root === undefined ? undefined : serializeXml(root);
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        throw new AssemblyError('TransformError', `map ${bound.title}: ${error.message}`, {
          status: 500,
          policy: bound.title,
          cause: error,
        });
      }
    },
  };
}

/** `application/xml` for the map policy; {@link MapCodec.forPort} binds it to a port's schema and options. */
export const xmlCodec: MapCodec = {
  ...bind({
    node: undefined,
    variable: '',
    title: 'map',
    fromRequest: false,
    maxBytes: requestLimit,
    includeEmpty: false,
    inherit: true,
  }),
  forPort(port: MapPort): MapCodec {
    let node: XmlSchemaNode | undefined;
    try {
      node = compileXmlSchema(port.schema, port.api.document);
    } catch (error) {
      if (error instanceof SchemaRefError) throw new PolicyCompileError(port.path, 'unresolved-ref', error.message);
      throw error;
    }
    const fromRequest = port.variable === 'request' || port.variable.startsWith('request.');
    return bind({
      node,
      variable: port.variable,
      title: port.title,
      fromRequest,
      maxBytes: fromRequest ? requestLimit : port.api.settings.maxBackendBodyBytes,
      includeEmpty: port.options.includeEmptyXMLElements === true,
      inherit: port.options.namespaceInheritance !== false,
    });
  },
};
