/**
 * XSD (W3C XML Schema 1.0 Part 1) components → OpenAPI 2.0 schemas with `xml` objects, the
 * form API Connect writes in a generated SOAP target's `definitions`: every element carries
 * its namespace and prefix when it is qualified (global elements always; local ones per
 * `form` / `elementFormDefault`, XSD §3.3.2), and nothing when it is unqualified; attributes
 * are properties with `xml.attribute: true`; `maxOccurs > 1` makes a list.
 *
 * Supported: sequence / all / choice (nested), element refs, named and anonymous complex and
 * simple types, complexContent extension/restriction, simpleContent extension (text as `$`),
 * attributes, enumerations. A recursive type is cut at its second appearance (`type: object`).
 */
import { DefinitionError } from '../errors.ts';
import { attributeOf, childElements } from './xml.ts';
import type { XmlElement } from './xml.ts';
import { qnameKey, XSD_NS } from './wsdl-model.ts';
import type { QName, WsdlModel, XsdComponent } from './wsdl-model.ts';
import { xsdQName } from './wsdl-reader.ts';

type Schema = Record<string, unknown>;

/** Schema context of a component: the schema document it was declared in. */
type Context = Omit<XsdComponent, 'node'>;

const builtins: Record<string, Schema> = {
  boolean: { type: 'boolean' },
  decimal: { type: 'number' },
  float: { type: 'number', format: 'float' },
  double: { type: 'number', format: 'double' },
  integer: { type: 'integer' },
  int: { type: 'integer', format: 'int32' },
  long: { type: 'integer', format: 'int64' },
  short: { type: 'integer' },
  byte: { type: 'integer' },
  nonNegativeInteger: { type: 'integer' },
  positiveInteger: { type: 'integer' },
  nonPositiveInteger: { type: 'integer' },
  negativeInteger: { type: 'integer' },
  unsignedLong: { type: 'integer' },
  unsignedInt: { type: 'integer' },
  unsignedShort: { type: 'integer' },
  unsignedByte: { type: 'integer' },
  date: { type: 'string', format: 'date' },
  dateTime: { type: 'string', format: 'date-time' },
  base64Binary: { type: 'string', format: 'byte' },
};

function xsd(node: XmlElement, local: string): XmlElement | undefined {
  return childElements(node).find((child) => child.namespace === XSD_NS && child.local === local);
}

function xsdChildren(node: XmlElement): XmlElement[] {
  return childElements(node).filter((child) => child.namespace === XSD_NS);
}

/** Turns XSD components into schemas; `prefixFor` names each namespace's prefix. */
export class XsdConverter {
  private readonly expanding = new Set<string>();

  constructor(
    private readonly model: WsdlModel,
    private readonly prefixFor: (namespace: string) => string,
  ) {}

  private fail(file: string, path: string, rule: string, reason: string): never {
    throw new DefinitionError(file, [{ path, rule, reason }]);
  }

  /** xml hints for a name in `namespace` ('' = unqualified: none). */
  hints(namespace: string, extra: Schema = {}): Schema {
    return namespace === '' ? extra : { ...extra, namespace, prefix: this.prefixFor(namespace) };
  }

  /** A global element's schema (with its xml namespace and prefix). */
  globalElement(name: QName, file: string, path: string): Schema {
    const component = this.model.elements.get(qnameKey(name));
    if (component === undefined)
      this.fail(file, path, 'unresolved-element', `element ${qnameKey(name)} is not declared in any schema given`);
    return this.element(component.node, component, true).schema;
  }

  /** A type's schema (named XSD type or built-in), for rpc parts and typed elements. */
  namedType(name: QName, file: string, path: string): Schema {
    if (name.namespace === XSD_NS) return { ...(builtins[name.local] ?? { type: 'string' }) };
    const key = qnameKey(name);
    const component = this.model.types.get(key);
    if (component === undefined)
      this.fail(file, path, 'unresolved-type', `type ${key} is not declared in any schema given`);
    if (this.expanding.has(key)) return { type: 'object', description: `recursive type ${name.local} (cut)` };
    this.expanding.add(key);
    try {
      return component.node.local === 'simpleType'
        ? this.simpleType(component.node, component)
        : this.complexType(component.node, component);
    } finally {
      this.expanding.delete(key);
    }
  }

  private element(
    node: XmlElement,
    context: Context,
    global: boolean,
  ): { name: string; schema: Schema; required: boolean } {
    const path = `xsd:element[${attributeOf(node, 'name') ?? attributeOf(node, 'ref') ?? ''}]`;
    const ref = xsdQName(node, 'ref');
    let name: string;
    let schema: Schema;
    if (ref !== undefined) {
      const target = this.model.elements.get(qnameKey(ref));
      if (target === undefined)
        this.fail(
          context.file,
          path,
          'unresolved-element',
          `element ref ${qnameKey(ref)} is not declared in any schema given`,
        );
      ({ name, schema } = this.element(target.node, target, true));
    } else {
      name = attributeOf(node, 'name') ?? '';
      const form = attributeOf(node, 'form');
      const qualified = global || form === 'qualified' || (form === undefined && context.elementFormQualified);
      const namespace = qualified ? context.targetNamespace : '';
      const type = xsdQName(node, 'type');
      const complex = xsd(node, 'complexType');
      const simple = xsd(node, 'simpleType');
      const content =
        type !== undefined
          ? this.namedType(type, context.file, path)
          : complex !== undefined
            ? this.complexType(complex, context)
            : simple !== undefined
              ? this.simpleType(simple, context)
              : {};
      schema = { ...content, xml: this.hints(namespace) };
      if (Object.keys(schema.xml as Schema).length === 0) delete schema.xml;
    }
    const max = attributeOf(node, 'maxOccurs');
    const required = global || attributeOf(node, 'minOccurs') !== '0';
    if (max !== undefined && (max === 'unbounded' || Number(max) > 1)) {
      schema = { type: 'array', items: schema, ...(schema.xml === undefined ? {} : { xml: schema.xml }) };
    }
    return { name, schema, required };
  }

  private simpleType(node: XmlElement, context: Context): Schema {
    const restriction = xsd(node, 'restriction');
    if (restriction === undefined) return { type: 'string' };
    const base = xsdQName(restriction, 'base');
    const schema = base === undefined ? { type: 'string' } : this.namedType(base, context.file, 'xsd:simpleType');
    const values = xsdChildren(restriction)
      .filter((child) => child.local === 'enumeration')
      .map((child) => attributeOf(child, 'value') ?? '');
    return values.length > 0 ? { ...schema, enum: values } : schema;
  }

  private complexType(node: XmlElement, context: Context): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    const simpleContent = xsd(node, 'simpleContent');
    if (simpleContent !== undefined) {
      const derivation = xsd(simpleContent, 'extension') ?? xsd(simpleContent, 'restriction');
      const base = derivation === undefined ? undefined : xsdQName(derivation, 'base');
      properties.$ = base === undefined ? { type: 'string' } : this.namedType(base, context.file, 'xsd:simpleContent');
      if (derivation !== undefined) this.attributes(derivation, context, properties, required);
      return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
    }
    const complexContent = xsd(node, 'complexContent');
    let body = node;
    if (complexContent !== undefined) {
      const derivation = xsd(complexContent, 'extension') ?? xsd(complexContent, 'restriction');
      if (derivation !== undefined) {
        const base = xsdQName(derivation, 'base');
        if (derivation.local === 'extension' && base !== undefined && base.namespace !== XSD_NS) {
          const inherited = this.namedType(base, context.file, 'xsd:complexContent');
          Object.assign(properties, (inherited.properties as Record<string, Schema> | undefined) ?? {});
          required.push(...((inherited.required as string[] | undefined) ?? []));
        }
        body = derivation;
      }
    }
    for (const child of xsdChildren(body)) {
      if (child.local === 'sequence' || child.local === 'all' || child.local === 'choice')
        this.particles(child, context, properties, required, child.local === 'choice');
    }
    this.attributes(body, context, properties, required);
    return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
  }

  private particles(
    group: XmlElement,
    context: Context,
    properties: Record<string, Schema>,
    required: string[],
    optional: boolean,
  ): void {
    for (const child of xsdChildren(group)) {
      if (child.local === 'element') {
        const element = this.element(child, context, false);
        properties[element.name] = element.schema;
        if (element.required && !optional && !required.includes(element.name)) required.push(element.name);
      } else if (child.local === 'sequence' || child.local === 'choice' || child.local === 'all') {
        this.particles(child, context, properties, required, optional || child.local === 'choice');
      }
    }
  }

  private attributes(
    holder: XmlElement,
    context: Context,
    properties: Record<string, Schema>,
    required: string[],
  ): void {
    for (const attribute of xsdChildren(holder).filter((child) => child.local === 'attribute')) {
      const name = attributeOf(attribute, 'name');
      if (name === undefined) continue;
      const type = xsdQName(attribute, 'type');
      const simple = xsd(attribute, 'simpleType');
      const content =
        type !== undefined
          ? this.namedType(type, context.file, `xsd:attribute[${name}]`)
          : simple !== undefined
            ? this.simpleType(simple, context)
            : { type: 'string' };
      const qualified =
        attributeOf(attribute, 'form') === 'qualified' ||
        (attributeOf(attribute, 'form') === undefined && context.attributeFormQualified);
      properties[name] = {
        ...content,
        xml: this.hints(qualified ? context.targetNamespace : '', { attribute: true }),
      };
      if (attributeOf(attribute, 'use') === 'required') required.push(name);
    }
  }
}
