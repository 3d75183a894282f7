/** The XSD schemas of a WSDL: where their global components are, read through the same bounded reader. */
import { attributeOf, childElements } from './xml.ts';
import type { XmlElement } from './xml.ts';
import { qnameKey, XSD_NS } from './wsdl-model.ts';
import type { WsdlModel } from './wsdl-model.ts';
import { localPath, recordScopes, resolveLocation } from './wsdl-reader.ts';
import type { Reader } from './wsdl-reader.ts';

/**
 * Records the global elements and types of an XSD schema (inline or a file) in the model, following
 * `xsd:import`, `xsd:include` and `xsd:redefine` (an include without a target namespace takes the
 * includer's: a chameleon include).
 */
export function readSchema(
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
