/**
 * The third phase of a WSDL import: schemas. Each operation's input and output become the
 * SOAP body children (XSD elements as target definitions with `xml` hints), the REST JSON
 * schema, and the copies a map makes between the two.
 */
import { qnameKey } from './wsdl-model.ts';
import type { QName, WsdlModel, WsdlPart } from './wsdl-model.ts';
import type { Operation } from './wsdl-operations.ts';
import { XsdConverter } from './xsd-schema.ts';

type Schema = Record<string, unknown>;

/** SOAP 1.1 envelope namespace (SOAP 1.1 §4.1.2) and SOAP 1.2's (SOAP 1.2 Part 1 §5). */
export const SOAP11_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_ENVELOPE = 'http://www.w3.org/2003/05/soap-envelope';

/** Prefixes: the WSDL's own where it declares one for a namespace, else ns1, ns2, … */
function prefixAllocator(model: WsdlModel): (namespace: string) => string {
  const chosen = new Map<string, string>();
  const used = new Set<string>(['soapenv']);
  return (namespace) => {
    const known = chosen.get(namespace);
    if (known !== undefined) return known;
    let prefix = Object.entries(model.prefixes).find(
      ([candidate, uri]) => uri === namespace && !used.has(candidate) && /^[A-Za-z_][\w.-]*$/.test(candidate),
    )?.[0];
    for (let n = 1; prefix === undefined || used.has(prefix); n++) prefix = `ns${n}`;
    used.add(prefix);
    chosen.set(namespace, prefix);
    return prefix;
  };
}

export interface Shape {
  /** Body children: property name → schema (a $ref to a target definition, or inline). */
  body: Record<string, Schema>;
  /** REST JSON schema of this direction. */
  rest: Schema;
  /** Map actions: JSON path below the REST value → path below `Envelope.Body`. */
  copies: Array<{ rest: string; soap: string }>;
  /** rpc: the wrapper element, written even when no part has a value. */
  wrapper?: string;
}

/** The target's definitions, filled as each operation's input and output are shaped. */
export class TargetSchemas {
  readonly definitions: Record<string, Schema> = {};
  private readonly elementDefs = new Map<string, string>();
  readonly converter: XsdConverter;
  readonly prefixFor: (namespace: string) => string;

  constructor(
    readonly model: WsdlModel,
    readonly targetName: string,
  ) {
    this.prefixFor = prefixAllocator(model);
    this.converter = new XsdConverter(model, this.prefixFor);
  }

  ref(name: string): Schema {
    return { $ref: `#/x-ibm-configuration/targets/${this.targetName}/definitions/${name}` };
  }

  elementRef(name: QName, path: string): { ref: Schema; schema: Schema } {
    const key = qnameKey(name);
    let defName = this.elementDefs.get(key);
    if (defName === undefined) {
      defName = name.local;
      for (let n = 2; Object.hasOwn(this.definitions, defName); n++) defName = `${name.local}${n}`;
      this.elementDefs.set(key, defName);
      this.definitions[defName] = this.converter.globalElement(name, this.model.file, path);
    }
    return { ref: this.ref(defName), schema: this.definitions[defName] };
  }

  shape(operation: Operation, parts: WsdlPart[], direction: 'input' | 'output', path: string): Shape {
    const body: Record<string, Schema> = {};
    const restProperties: Record<string, Schema> = {};
    const copies: Shape['copies'] = [];
    if (operation.binding.style === 'rpc') {
      // WSDL 1.1 §3.5: the rpc wrapper is named after the operation (+ "Response"), in soap:body's namespace; parts are unqualified.
      const wrapper = direction === 'input' ? operation.name : `${operation.name}Response`;
      const namespace = direction === 'input' ? operation.binding.inputNamespace : operation.binding.outputNamespace;
      const properties: Record<string, Schema> = {};
      for (const part of parts) {
        const schema =
          part.element !== undefined
            ? this.elementRef(part.element, path).ref
            : this.converter.namedType(part.type!, this.model.file, path);
        properties[part.name] = schema;
        restProperties[part.name] = schema;
        copies.push({ rest: part.name, soap: `${wrapper}.${part.name}` });
      }
      body[wrapper] = { type: 'object', properties, xml: this.converter.hints(namespace) };
      return { body, rest: { type: 'object', properties: restProperties }, copies, wrapper };
    }
    if (parts.length === 1 && parts[0].element !== undefined) {
      const { ref, schema } = this.elementRef(parts[0].element, path);
      body[parts[0].element.local] = ref;
      if (schema.type === 'object') {
        copies.push({ rest: '', soap: parts[0].element.local });
        return { body, rest: ref, copies };
      }
    }
    for (const part of parts) {
      if (part.element !== undefined) {
        const { ref } = this.elementRef(part.element, path);
        body[part.element.local] = ref;
        restProperties[part.name] = ref;
        copies.push({ rest: part.name, soap: part.element.local });
      } else {
        // A typed part in document style (not WS-I conformant): an unqualified element named after the part.
        const schema = this.converter.namedType(part.type!, this.model.file, path);
        body[part.name] = schema;
        restProperties[part.name] = schema;
        copies.push({ rest: part.name, soap: part.name });
      }
    }
    return { body, rest: { type: 'object', properties: restProperties }, copies };
  }

  envelope(name: string, body: Record<string, Schema>, soapVersion: '1.1' | '1.2'): string {
    const namespace = soapVersion === '1.2' ? SOAP12_ENVELOPE : SOAP11_ENVELOPE;
    const xml = { namespace, prefix: 'soapenv' };
    let defName = name;
    for (let n = 2; Object.hasOwn(this.definitions, defName); n++) defName = `${name}${n}`;
    this.definitions[defName] = {
      type: 'object',
      properties: {
        Envelope: {
          type: 'object',
          xml,
          properties: { Body: { type: 'object', xml, properties: body } },
          required: ['Body'],
        },
      },
      required: ['Envelope'],
    };
    return defName;
  }
}
