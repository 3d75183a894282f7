/**
 * WSDL 1.1 reading (W3C Note "WSDL 1.1", 2001): definitions, messages, port types, bindings
 * with SOAP 1.1 (§3) or SOAP 1.2 (W3C "WSDL 1.1 Binding Extension for SOAP 1.2") extensions,
 * services; XSD schemas inline in `wsdl:types` or brought in by `xsd:import`/`xsd:include`,
 * and `wsdl:import`ed definitions, all read from sibling files through a {@link WsdlFiles}
 * source (a folder, a zip, or attachments). Never fetches anything over the network.
 *
 * Problems are {@link DefinitionError}s naming the file, the element
 * (`wsdl:definitions/wsdl:binding[financingBinding]`) and the reason.
 */
import { posix } from 'node:path';
import { DefinitionError } from '../errors.ts';
import { attributeOf, childElements, parseXml, XmlError } from './xml.ts';
import type { XmlElement } from './xml.ts';

export const WSDL_NS = 'http://schemas.xmlsoap.org/wsdl/';
export const WSDL_SOAP11_NS = 'http://schemas.xmlsoap.org/wsdl/soap/';
export const WSDL_SOAP12_NS = 'http://schemas.xmlsoap.org/wsdl/soap12/';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';

/** Where WSDL and XSD files are read from, by path relative to the source's root. */
export interface WsdlFiles {
  /** The text of a file, or undefined when the source has no such file. */
  read(path: string): string | undefined;
}

/** A namespace-qualified name, as `{namespace}local`. */
export interface QName {
  namespace: string;
  local: string;
}

/** `{ns}local`, the key used in the model's maps (and API Connect's `soap-operation`). */
export function qnameKey(name: QName): string {
  return `{${name.namespace}}${name.local}`;
}

export interface WsdlPart {
  name: string;
  element?: QName;
  type?: QName;
}

export interface WsdlOperation {
  name: string;
  input?: QName;
  output?: QName;
  faults: QName[];
}

export interface BindingOperation {
  name: string;
  soapAction: string;
  style: 'document' | 'rpc';
  /** soap:body namespace (rpc wrapper namespace). */
  inputNamespace: string;
  outputNamespace: string;
  /** soap:body parts="…", when it restricts the parts. */
  inputParts?: string[];
  outputParts?: string[];
}

export interface WsdlBinding {
  name: string;
  type: QName;
  soapVersion: '1.1' | '1.2';
  operations: Map<string, BindingOperation>;
}

export interface WsdlPort {
  name: string;
  binding: QName;
  address: string;
  soapVersion: '1.1' | '1.2';
}

export interface WsdlService {
  name: string;
  ports: WsdlPort[];
}

/** A global XSD component with the schema context it was declared in. */
export interface XsdComponent {
  node: XmlElement;
  targetNamespace: string;
  elementFormQualified: boolean;
  attributeFormQualified: boolean;
  file: string;
}

export interface WsdlModel {
  file: string;
  name: string;
  targetNamespace: string;
  /** Prefixes declared on the root definitions element (for readable generated prefixes). */
  prefixes: Record<string, string>;
  messages: Map<string, WsdlPart[]>;
  portTypes: Map<string, WsdlOperation[]>;
  bindings: Map<string, WsdlBinding>;
  services: WsdlService[];
  elements: Map<string, XsdComponent>;
  types: Map<string, XsdComponent>;
}

/** Largest WSDL or XSD file read (bytes). */
const maxFileBytes = 4 * 1024 * 1024;
/** Most files one import may read (imports and includes together). */
const maxFiles = 200;

class Reader {
  readonly problems: Array<{ file: string; path: string; rule: string; reason: string }> = [];
  readonly loaded = new Set<string>();
  readonly schemasLoaded = new Set<string>();

  constructor(readonly files: WsdlFiles) {}

  fail(file: string, path: string, rule: string, reason: string): never {
    throw new DefinitionError(file, [{ path, rule, reason }]);
  }

  open(file: string, from: string, at: string): XmlElement {
    if (this.loaded.size >= maxFiles)
      this.fail(from, at, 'too-many-files', `more than ${maxFiles} WSDL/XSD files are referenced`);
    const text = this.files.read(file);
    if (text === undefined)
      this.fail(
        from,
        at,
        'missing-file',
        `"${file}" is not among the files given (remote locations are never fetched)`,
      );
    try {
      return parseXml(text, { maxBytes: maxFileBytes });
    } catch (error) {
      if (error instanceof XmlError) this.fail(file, '$', `xml-${error.code}`, error.message);
      throw error;
    }
  }
}

/** Resolves `location` (relative to `from`) to a path inside the source; remote or escaping paths are refused. */
export function resolveLocation(
  reader: { fail(file: string, path: string, rule: string, reason: string): never },
  from: string,
  location: string,
  at: string,
): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(location))
    reader.fail(
      from,
      at,
      'remote-location',
      `"${location}" is a remote location; Portico reads only the files given (add it to the folder or zip)`,
    );
  const joined = posix.normalize(posix.join(posix.dirname(from), location.replace(/\\/g, '/')));
  if (joined.startsWith('../') || joined === '..' || posix.isAbsolute(joined))
    reader.fail(from, at, 'location-outside', `"${location}" points outside the files given`);
  return joined;
}

function qnameOf(element: XmlElement, value: string | undefined, scope: Map<string, string>): QName | undefined {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  const prefix = colon < 0 ? '' : value.slice(0, colon);
  const local = colon < 0 ? value : value.slice(colon + 1);
  const namespace = scope.get(prefix);
  if (namespace === undefined && prefix !== '') return { namespace: `\u0000undeclared:${prefix}`, local };
  return { namespace: namespace ?? '', local };
}

/** In-scope namespace declarations for each element, computed as the tree is walked. */
function scopeOf(parent: Map<string, string>, element: XmlElement): Map<string, string> {
  const keys = Object.keys(element.declarations);
  if (keys.length === 0) return parent;
  return new Map([...parent, ...Object.entries(element.declarations)]);
}

function localPath(parent: string, element: XmlElement, name?: string): string {
  const step = element.prefix === '' ? element.local : `${element.prefix}:${element.local}`;
  return `${parent}/${step}${name === undefined ? '' : `[${name}]`}`;
}

/** A QName attribute, checked: an undeclared prefix is a definition error naming the element. */
function requireQName(
  reader: Reader,
  file: string,
  path: string,
  element: XmlElement,
  attribute: string,
  scope: Map<string, string>,
): QName {
  const value = attributeOf(element, attribute);
  if (value === undefined) reader.fail(file, path, 'required', `the ${attribute} attribute is missing`);
  const name = qnameOf(element, value, scope)!;
  if (name.namespace.startsWith('\u0000undeclared:'))
    reader.fail(file, path, 'undeclared-prefix', `the prefix of ${attribute}="${value}" is not declared`);
  return name;
}

/** Records QName scopes so XSD type references can be resolved later. */
const scopes = new WeakMap<XmlElement, Map<string, string>>();

function recordScopes(element: XmlElement, parent: Map<string, string>): void {
  const scope = scopeOf(parent, element);
  scopes.set(element, scope);
  for (const child of childElements(element)) recordScopes(child, scope);
}

/** The QName an XSD attribute (type, ref, base, element) names, in the element's scope. */
export function xsdQName(element: XmlElement, attribute: string): QName | undefined {
  return qnameOf(element, attributeOf(element, attribute), scopes.get(element) ?? new Map());
}

function readSchema(
  reader: Reader,
  model: WsdlModel,
  schema: XmlElement,
  file: string,
  path: string,
  chameleonNamespace?: string,
): void {
  const targetNamespace = attributeOf(schema, 'targetNamespace') ?? chameleonNamespace ?? '';
  const context = {
    targetNamespace,
    elementFormQualified: attributeOf(schema, 'elementFormDefault') === 'qualified',
    attributeFormQualified: attributeOf(schema, 'attributeFormDefault') === 'qualified',
    file,
  };
  for (const child of childElements(schema)) {
    if (child.namespace !== XSD_NS) continue;
    const name = attributeOf(child, 'name');
    const at = localPath(path, child, name ?? attributeOf(child, 'schemaLocation'));
    if (child.local === 'import' || child.local === 'include' || child.local === 'redefine') {
      const location = attributeOf(child, 'schemaLocation');
      // An import without a location names a namespace defined elsewhere (another inline schema).
      if (location === undefined) continue;
      const target = resolveLocation(reader, file, location, at);
      const key = `${target}#${child.local === 'import' ? '' : targetNamespace}`;
      if (reader.schemasLoaded.has(key)) continue;
      reader.schemasLoaded.add(key);
      reader.loaded.add(target);
      const root = reader.open(target, file, at);
      if (root.namespace !== XSD_NS || root.local !== 'schema')
        reader.fail(target, '$', 'not-a-schema', `expected an xsd:schema root element, found <${root.name}>`);
      recordScopes(root, new Map());
      const imported = attributeOf(root, 'targetNamespace');
      if (
        child.local === 'import' &&
        attributeOf(child, 'namespace') !== undefined &&
        imported !== attributeOf(child, 'namespace')
      ) {
        reader.fail(
          file,
          at,
          'namespace-mismatch',
          `imports namespace "${attributeOf(child, 'namespace')}" but ${target} has targetNamespace "${imported ?? ''}"`,
        );
      }
      if (child.local !== 'import' && imported !== undefined && imported !== targetNamespace) {
        reader.fail(
          file,
          at,
          'namespace-mismatch',
          `includes ${target} whose targetNamespace "${imported}" differs from "${targetNamespace}"`,
        );
      }
      readSchema(reader, model, root, target, 'xsd:schema', child.local === 'import' ? undefined : targetNamespace);
      continue;
    }
    if (name === undefined) continue;
    const key = qnameKey({ namespace: targetNamespace, local: name });
    if (child.local === 'element') model.elements.set(key, { node: child, ...context });
    else if (child.local === 'complexType' || child.local === 'simpleType')
      model.types.set(key, { node: child, ...context });
  }
}

function soapVersionOf(element: XmlElement): '1.1' | '1.2' | undefined {
  if (element.namespace === WSDL_SOAP11_NS) return '1.1';
  if (element.namespace === WSDL_SOAP12_NS) return '1.2';
  return undefined;
}

function readBinding(
  reader: Reader,
  file: string,
  path: string,
  binding: XmlElement,
  scope: Map<string, string>,
): WsdlBinding | undefined {
  const name = attributeOf(binding, 'name') ?? '';
  const soapBinding = childElements(binding).find(
    (child) => child.local === 'binding' && soapVersionOf(child) !== undefined,
  );
  // Not a SOAP binding (HTTP GET/POST, MIME): not importable, and not an error in itself.
  if (soapBinding === undefined) return undefined;
  const soapVersion = soapVersionOf(soapBinding)!;
  const defaultStyle = attributeOf(soapBinding, 'style') === 'rpc' ? 'rpc' : 'document';
  const transport = attributeOf(soapBinding, 'transport');
  if (transport !== undefined && transport !== 'http://schemas.xmlsoap.org/soap/http') {
    reader.fail(file, path, 'unsupported-transport', `transport "${transport}" is not SOAP over HTTP`);
  }
  const operations = new Map<string, BindingOperation>();
  for (const operation of childElements(binding).filter(
    (child) => child.namespace === WSDL_NS && child.local === 'operation',
  )) {
    const opName = attributeOf(operation, 'name') ?? '';
    const at = localPath(path, operation, opName);
    const soapOperation = childElements(operation).find(
      (child) => child.local === 'operation' && soapVersionOf(child) !== undefined,
    );
    const style =
      (soapOperation && attributeOf(soapOperation, 'style')) === 'rpc'
        ? 'rpc'
        : soapOperation && attributeOf(soapOperation, 'style') === 'document'
          ? 'document'
          : defaultStyle;
    const body = (direction: 'input' | 'output'): { namespace: string; parts?: string[] } => {
      const holder = childElements(operation).find((child) => child.namespace === WSDL_NS && child.local === direction);
      const soapBody =
        holder && childElements(holder).find((child) => child.local === 'body' && soapVersionOf(child) !== undefined);
      if (holder === undefined || soapBody === undefined) return { namespace: '' };
      const use = attributeOf(soapBody, 'use') ?? 'literal';
      if (use !== 'literal')
        reader.fail(
          file,
          localPath(at, holder),
          'unsupported-use',
          `soap:body use="${use}" is not supported (only literal: WS-I Basic Profile 1.1 R2706)`,
        );
      const parts = attributeOf(soapBody, 'parts');
      return {
        namespace: attributeOf(soapBody, 'namespace') ?? '',
        parts: parts === undefined ? undefined : parts.split(/\s+/).filter(Boolean),
      };
    };
    const input = body('input');
    const output = body('output');
    operations.set(opName, {
      name: opName,
      soapAction: (soapOperation && attributeOf(soapOperation, 'soapAction')) ?? '',
      style,
      inputNamespace: input.namespace,
      outputNamespace: output.namespace,
      inputParts: input.parts,
      outputParts: output.parts,
    });
  }
  return { name, type: requireQName(reader, file, path, binding, 'type', scope), soapVersion, operations };
}

function readDefinitions(reader: Reader, model: WsdlModel, root: XmlElement, file: string): void {
  if (root.namespace !== WSDL_NS || root.local !== 'definitions') {
    reader.fail(
      file,
      '$',
      'not-wsdl',
      `expected a WSDL 1.1 <wsdl:definitions> root element, found <${root.name}> in namespace "${root.namespace}"`,
    );
  }
  recordScopes(root, new Map());
  const targetNamespace = attributeOf(root, 'targetNamespace') ?? '';
  const rootPath = 'wsdl:definitions';
  const rootScope = scopes.get(root)!;
  for (const child of childElements(root)) {
    if (child.namespace !== WSDL_NS) continue;
    const name = attributeOf(child, 'name');
    const path = localPath(rootPath, child, name);
    const scope = scopes.get(child)!;
    const key = name === undefined ? '' : qnameKey({ namespace: targetNamespace, local: name });
    switch (child.local) {
      case 'import': {
        const location = attributeOf(child, 'location');
        if (location === undefined) reader.fail(file, path, 'required', 'wsdl:import needs a location');
        const target = resolveLocation(reader, file, location, path);
        if (reader.loaded.has(target)) break;
        reader.loaded.add(target);
        const imported = reader.open(target, file, path);
        if (imported.namespace === XSD_NS && imported.local === 'schema') {
          recordScopes(imported, new Map());
          readSchema(reader, model, imported, target, 'xsd:schema');
        } else {
          readDefinitions(reader, model, imported, target);
        }
        break;
      }
      case 'types':
        for (const schema of childElements(child).filter(
          (node) => node.namespace === XSD_NS && node.local === 'schema',
        )) {
          readSchema(reader, model, schema, file, localPath(path, schema, attributeOf(schema, 'targetNamespace')));
        }
        break;
      case 'message':
        model.messages.set(
          key,
          childElements(child)
            .filter((node) => node.namespace === WSDL_NS && node.local === 'part')
            .map((part) => {
              const partName = attributeOf(part, 'name') ?? '';
              const partPath = localPath(path, part, partName);
              const partScope = scopes.get(part)!;
              const element =
                attributeOf(part, 'element') === undefined
                  ? undefined
                  : requireQName(reader, file, partPath, part, 'element', partScope);
              const type =
                attributeOf(part, 'type') === undefined
                  ? undefined
                  : requireQName(reader, file, partPath, part, 'type', partScope);
              if (element === undefined && type === undefined)
                reader.fail(file, partPath, 'required', 'a part needs an element or a type attribute');
              return { name: partName, element, type };
            }),
        );
        break;
      case 'portType':
        model.portTypes.set(
          key,
          childElements(child)
            .filter((node) => node.namespace === WSDL_NS && node.local === 'operation')
            .map((operation) => {
              const opPath = localPath(path, operation, attributeOf(operation, 'name'));
              const message = (local: string): QName | undefined => {
                const holder = childElements(operation).find(
                  (node) => node.namespace === WSDL_NS && node.local === local,
                );
                return holder === undefined
                  ? undefined
                  : requireQName(reader, file, localPath(opPath, holder), holder, 'message', scopes.get(holder)!);
              };
              const faults = childElements(operation)
                .filter((node) => node.namespace === WSDL_NS && node.local === 'fault')
                .map((fault) =>
                  requireQName(reader, file, localPath(opPath, fault), fault, 'message', scopes.get(fault)!),
                );
              return {
                name: attributeOf(operation, 'name') ?? '',
                input: message('input'),
                output: message('output'),
                faults,
              };
            }),
        );
        break;
      case 'binding': {
        const binding = readBinding(reader, file, path, child, scope);
        if (binding !== undefined) model.bindings.set(key, binding);
        break;
      }
      case 'service': {
        const ports: WsdlPort[] = [];
        for (const port of childElements(child).filter((node) => node.namespace === WSDL_NS && node.local === 'port')) {
          const portPath = localPath(path, port, attributeOf(port, 'name'));
          const address = childElements(port).find(
            (node) => node.local === 'address' && soapVersionOf(node) !== undefined,
          );
          if (address === undefined) continue;
          const location = attributeOf(address, 'location');
          if (location === undefined)
            reader.fail(file, localPath(portPath, address), 'required', 'soap:address needs a location');
          ports.push({
            name: attributeOf(port, 'name') ?? '',
            binding: requireQName(reader, file, portPath, port, 'binding', scopes.get(port)!),
            address: location,
            soapVersion: soapVersionOf(address)!,
          });
        }
        model.services.push({ name: name ?? '', ports });
        break;
      }
      default:
        break;
    }
  }
  if (file === model.file) {
    for (const [prefix, uri] of rootScope) if (prefix !== '' && prefix !== 'xml') model.prefixes[prefix] = uri;
  }
}

/**
 * Reads a WSDL 1.1 document and everything it imports from `files`.
 * @throws DefinitionError naming the file, the element path and the reason.
 */
export function readWsdl(file: string, files: WsdlFiles): WsdlModel {
  const reader = new Reader(files);
  reader.loaded.add(file);
  const root = reader.open(file, file, '$');
  if (root.local === 'description')
    reader.fail(file, '$', 'unsupported-version', 'WSDL 2.0 is not supported; import a WSDL 1.1 document');
  const model: WsdlModel = {
    file,
    name: attributeOf(root, 'name') ?? '',
    targetNamespace: attributeOf(root, 'targetNamespace') ?? '',
    prefixes: {},
    messages: new Map(),
    portTypes: new Map(),
    bindings: new Map(),
    services: [],
    elements: new Map(),
    types: new Map(),
  };
  readDefinitions(reader, model, root, file);
  return model;
}
