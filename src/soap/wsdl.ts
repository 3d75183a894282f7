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
import { attributeOf, childElements } from './xml.ts';
import type { XmlElement } from './xml.ts';
import { readBinding, soapVersionOf } from './wsdl-binding.ts';
import { qnameKey, WSDL_NS, XSD_NS } from './wsdl-model.ts';
import type { QName, WsdlFiles, WsdlModel, WsdlPort } from './wsdl-model.ts';
import { localPath, Reader, recordScopes, requireQName, resolveLocation, scopes } from './wsdl-reader.ts';
import { readSchema } from './xsd-schema-reader.ts';

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
