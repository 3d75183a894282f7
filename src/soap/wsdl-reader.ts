/**
 * Reading the files of a WSDL import: each file parsed once through the safe XML parser, locations
 * kept inside the files given (never fetched), and the in-scope namespace declarations of each
 * element recorded so QName attributes resolve where they were written.
 */
import { posix } from 'node:path';
import { DefinitionError } from '../errors.ts';
import { attributeOf, childElements, parseXml, XmlError } from './xml.ts';
import type { XmlElement } from './xml.ts';
import type { QName, WsdlFiles } from './wsdl-model.ts';

/** Largest WSDL or XSD file read (bytes). */
const maxFileBytes = 4 * 1024 * 1024;
/** Most files one import may read (imports and includes together). */
const maxFiles = 200;

/** The files one WSDL import reads, bounded in count and size; every problem is a definition error. */
export class Reader {
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

export function qnameOf(element: XmlElement, value: string | undefined, scope: Map<string, string>): QName | undefined {
  if (value === undefined) return undefined;
  const colon = value.indexOf(':');
  const prefix = colon < 0 ? '' : value.slice(0, colon);
  const local = colon < 0 ? value : value.slice(colon + 1);
  const namespace = scope.get(prefix);
  if (namespace === undefined && prefix !== '') return { namespace: `\u0000undeclared:${prefix}`, local };
  return { namespace: namespace ?? '', local };
}

/** In-scope namespace declarations for each element, computed as the tree is walked. */
export function scopeOf(parent: Map<string, string>, element: XmlElement): Map<string, string> {
  const keys = Object.keys(element.declarations);
  if (keys.length === 0) return parent;
  return new Map([...parent, ...Object.entries(element.declarations)]);
}

export function localPath(parent: string, element: XmlElement, name?: string): string {
  const step = element.prefix === '' ? element.local : `${element.prefix}:${element.local}`;
  return `${parent}/${step}${name === undefined ? '' : `[${name}]`}`;
}

/** A QName attribute, checked: an undeclared prefix is a definition error naming the element. */
export function requireQName(
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
export const scopes = new WeakMap<XmlElement, Map<string, string>>();

export function recordScopes(element: XmlElement, parent: Map<string, string>): void {
  const scope = scopeOf(parent, element);
  scopes.set(element, scope);
  for (const child of childElements(element)) recordScopes(child, scope);
}

/** The QName an XSD attribute (type, ref, base, element) names, in the element's scope. */
export function xsdQName(element: XmlElement, attribute: string): QName | undefined {
  return qnameOf(element, attributeOf(element, attribute), scopes.get(element) ?? new Map());
}
