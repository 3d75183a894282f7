/**
 * "REST from SOAP" (IBM "Creating a REST proxy from a SOAP service" / the v10 lab's Target
 * Services import): from a WSDL 1.1 service, a Swagger 2.0 API that exposes each SOAP
 * operation as `POST /<operation>` taking and returning JSON, with
 *
 * - `x-ibm-configuration.targets.<service>`: the SOAP service as API Connect writes it
 *   (`x-ibm-configuration: {type: wsdl, wsdl-definition: {wsdl, service, port, soap-version}}`,
 *   paths `/<operation>` post with `x-ibm-soap: {soap-action, soap-operation}`, definitions
 *   with `xml: {prefix, namespace}` for the envelopes and every XSD element);
 * - `properties.<service>_url`: the soap:address (override it per catalog);
 * - an assembly with one operation-switch case per operation: map (JSON → SOAP request,
 *   `content-type`/`SOAPAction` by `default` actions) → invoke → map (SOAP reply → JSON).
 *
 * The JSON request body is the content of the input element when the input is one element
 * part of a complex type (document/literal wrapped: `{"amount": 10000, …}`); otherwise it is
 * an object keyed by part name (document/literal bare with simple or several parts, and
 * rpc/literal). The JSON response follows the same rule for the output.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import AdmZip from 'adm-zip';
import { DefinitionError } from '../errors.ts';
import { qnameKey, readWsdl } from './wsdl.ts';
import type { BindingOperation, QName, WsdlFiles, WsdlModel, WsdlPart, WsdlPort, WsdlService } from './wsdl.ts';
import { XsdConverter } from './xsd-schema.ts';

type Schema = Record<string, unknown>;

/** SOAP 1.1 envelope namespace (SOAP 1.1 §4.1.2) and SOAP 1.2's (SOAP 1.2 Part 1 §5). */
export const SOAP11_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_ENVELOPE = 'http://www.w3.org/2003/05/soap-envelope';

/** Zip limits: entries, bytes per entry and in total, uncompressed (zip bombs). */
const zipLimits = { entries: 500, entryBytes: 4 * 1024 * 1024, totalBytes: 32 * 1024 * 1024 };

export interface WsdlImportOptions {
  /** Service to import; default the first with a SOAP port. */
  service?: string;
  /** Port of that service; default its first SOAP port. */
  port?: string;
  /** API version; default 1.0.0. */
  version?: string;
}

/** Files from a string map (attachments, tests). */
export function filesFromMap(files: Record<string, string>): WsdlFiles {
  const normalised = new Map(
    Object.entries(files).map(([name, text]) => [posix.normalize(name.replace(/\\/g, '/')), text]),
  );
  return { read: (path) => normalised.get(posix.normalize(path)) };
}

/** Files of a folder (recursive, .wsdl/.xsd only); paths are relative to the folder. */
export function readWsdlFolder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (path: string, depth: number): void => {
    if (depth > 8) return;
    for (const name of readdirSync(path)) {
      if (name.startsWith('.')) continue;
      const full = join(path, name);
      const stat = statSync(full);
      if (stat.isDirectory()) visit(full, depth + 1);
      else if (/\.(wsdl|xsd|xml)$/i.test(name) && stat.size <= zipLimits.entryBytes)
        out[relative(dir, full).split(sep).join('/')] = readFileSync(full, 'utf8');
    }
  };
  visit(dir, 0);
  return out;
}

/**
 * The .wsdl/.xsd files of a zip, bounded in count and size.
 * @throws DefinitionError when the zip cannot be read or is over the limits.
 */
export function readWsdlZip(bytes: Buffer, file: string): Record<string, string> {
  let zip: AdmZip;
  try {
    zip = new AdmZip(bytes);
  } catch (error) {
    throw new DefinitionError(file, [
      { path: '$', rule: 'zip', reason: `not a readable zip file: ${(error as Error).message}` },
    ]);
  }
  const entries = zip.getEntries().filter((entry) => !entry.isDirectory);
  if (entries.length > zipLimits.entries)
    throw new DefinitionError(file, [{ path: '$', rule: 'zip-limit', reason: `more than ${zipLimits.entries} files` }]);
  const out: Record<string, string> = {};
  let total = 0;
  for (const entry of entries) {
    if (!/\.(wsdl|xsd|xml)$/i.test(entry.entryName)) continue;
    const name = posix.normalize(entry.entryName.replace(/\\/g, '/'));
    if (name.startsWith('../') || posix.isAbsolute(name))
      throw new DefinitionError(file, [
        { path: entry.entryName, rule: 'zip-path', reason: 'an entry points outside the zip' },
      ]);
    if (entry.header.size > zipLimits.entryBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `larger than ${zipLimits.entryBytes} bytes uncompressed`,
        },
      ]);
    total += entry.header.size;
    if (total > zipLimits.totalBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `the files add up to more than ${zipLimits.totalBytes} bytes uncompressed`,
        },
      ]);
    const data = entry.getData();
    if (data.length > zipLimits.entryBytes)
      throw new DefinitionError(file, [
        {
          path: entry.entryName,
          rule: 'zip-limit',
          reason: `larger than ${zipLimits.entryBytes} bytes uncompressed`,
        },
      ]);
    out[name] = data.toString('utf8');
  }
  return out;
}

/** The one .wsdl file of a file set (the shallowest when several), for zips and folders. */
export function mainWsdlOf(files: Record<string, string>, file: string): string {
  const wsdls = Object.keys(files)
    .filter((name) => /\.wsdl$/i.test(name))
    .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  if (wsdls.length === 0)
    throw new DefinitionError(file, [{ path: '$', rule: 'no-wsdl', reason: 'no .wsdl file found' }]);
  return wsdls[0];
}

/** Lowercase, `-` separated: API Connect's x-ibm-name form. */
function slug(name: string): string {
  return (
    name
      .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'soap-service'
  );
}

function pickService(model: WsdlModel, options: WsdlImportOptions): { service: WsdlService; port: WsdlPort } {
  const services = model.services.filter((service) => service.ports.length > 0);
  const service =
    options.service === undefined
      ? services[0]
      : model.services.find((candidate) => candidate.name === options.service);
  if (service === undefined) {
    const reason =
      options.service === undefined
        ? 'no wsdl:service with a SOAP 1.1 or 1.2 port'
        : `no wsdl:service named "${options.service}" (services: ${model.services.map((s) => s.name).join(', ') || 'none'})`;
    throw new DefinitionError(model.file, [{ path: 'wsdl:definitions', rule: 'no-service', reason }]);
  }
  const port =
    options.port === undefined ? service.ports[0] : service.ports.find((candidate) => candidate.name === options.port);
  if (port === undefined) {
    throw new DefinitionError(model.file, [
      {
        path: `wsdl:definitions/wsdl:service[${service.name}]`,
        rule: 'no-port',
        reason: options.port === undefined ? 'the service has no SOAP port' : `no SOAP port named "${options.port}"`,
      },
    ]);
  }
  return { service, port };
}

/** One operation, resolved through binding, port type and messages. */
interface Operation {
  name: string;
  binding: BindingOperation;
  input: WsdlPart[];
  output: WsdlPart[] | undefined;
  inputMessage: string;
  outputMessage: string | undefined;
}

function messageParts(
  model: WsdlModel,
  name: QName | undefined,
  only: string[] | undefined,
  path: string,
): WsdlPart[] | undefined {
  if (name === undefined) return undefined;
  const parts = model.messages.get(qnameKey(name));
  if (parts === undefined)
    throw new DefinitionError(model.file, [
      { path, rule: 'unresolved-message', reason: `message ${qnameKey(name)} is not defined` },
    ]);
  return only === undefined ? parts : parts.filter((part) => only.includes(part.name));
}

function operationsOf(model: WsdlModel, port: WsdlPort): Operation[] {
  const bindingPath = `wsdl:definitions/wsdl:binding[${port.binding.local}]`;
  const binding = model.bindings.get(qnameKey(port.binding));
  if (binding === undefined)
    throw new DefinitionError(model.file, [
      {
        path: `wsdl:definitions/wsdl:service/wsdl:port[${port.name}]`,
        rule: 'unresolved-binding',
        reason: `binding ${qnameKey(port.binding)} is not a SOAP binding defined here`,
      },
    ]);
  const portType = model.portTypes.get(qnameKey(binding.type));
  if (portType === undefined)
    throw new DefinitionError(model.file, [
      {
        path: bindingPath,
        rule: 'unresolved-port-type',
        reason: `portType ${qnameKey(binding.type)} is not defined`,
      },
    ]);
  return [...binding.operations.values()].map((operation) => {
    const abstract = portType.find((candidate) => candidate.name === operation.name);
    const path = `${bindingPath}/wsdl:operation[${operation.name}]`;
    if (abstract === undefined)
      throw new DefinitionError(model.file, [
        {
          path,
          rule: 'unresolved-operation',
          reason: `portType ${binding.type.local} has no operation "${operation.name}"`,
        },
      ]);
    if (abstract.input === undefined)
      throw new DefinitionError(model.file, [
        {
          path,
          rule: 'unsupported-operation',
          reason: 'notification operations (output only) are not supported',
        },
      ]);
    return {
      name: operation.name,
      binding: operation,
      input: messageParts(model, abstract.input, operation.inputParts, path)!,
      output: messageParts(model, abstract.output, operation.outputParts, path),
      inputMessage: abstract.input.local,
      outputMessage: abstract.output?.local,
    };
  });
}

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

interface Shape {
  /** Body children: property name → schema (a $ref to a target definition, or inline). */
  body: Record<string, Schema>;
  /** REST JSON schema of this direction. */
  rest: Schema;
  /** Map actions: JSON path below the REST value → path below `Envelope.Body`. */
  copies: Array<{ rest: string; soap: string }>;
  /** rpc: the wrapper element, written even when no part has a value. */
  wrapper?: string;
}

class Generator {
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

function headerDefaults(soapVersion: '1.1' | '1.2', action: string): Array<[string, string, string]> {
  // SOAP 1.1 §6.1.1: SOAPAction is a quoted URI; SOAP 1.2 Part 2 §7.1.4 / RFC 3902: the action is a media type parameter.
  if (soapVersion === '1.2')
    return [
      [
        'content-type',
        'message.headers.content-type',
        `application/soap+xml; charset=utf-8${action === '' ? '' : `; action="${action}"`}`,
      ],
    ];
  return [
    ['content-type', 'message.headers.content-type', 'text/xml; charset=utf-8'],
    ['SOAPAction', 'message.headers.SOAPAction', `"${action}"`],
  ];
}

function prefixed(base: string, path: string): string {
  return path === '' ? base : `${base}.${path}`;
}

function assemblyCase(
  operation: Operation,
  shapes: { input: Shape; output: Shape | undefined },
  refs: { request: string; response: string; inputEnvelope: Schema; outputEnvelope: Schema | undefined },
  soapVersion: '1.1' | '1.2',
  urlProperty: string,
): Schema {
  const headers = headerDefaults(soapVersion, operation.binding.soapAction);
  const outputs: Record<string, Schema> = {
    body: { schema: refs.inputEnvelope, variable: 'message.body', content: 'application/xml' },
  };
  for (const [name, variable] of headers) outputs[name] = { schema: { type: 'string', title: name }, variable };
  const inputActions: Schema[] = headers.map(([name, , value]) => ({ set: name, default: value }));
  if (shapes.input.wrapper !== undefined)
    inputActions.push({ set: `body.Envelope.Body.${shapes.input.wrapper}`, value: '{}' });
  for (const copy of shapes.input.copies) {
    // A missing request body still sends the (empty) request element: `default` takes scalars only, so a JSONata value does it.
    inputActions.push(
      copy.rest === ''
        ? { set: `body.Envelope.Body.${copy.soap}`, value: '$exists(input) ? input : {}' }
        : { set: `body.Envelope.Body.${copy.soap}`, from: prefixed('input', copy.rest) },
    );
  }
  if (shapes.input.copies.length === 0) {
    for (const name of Object.keys(shapes.input.body))
      inputActions.push({ set: `body.Envelope.Body.${name}`, value: '{}' });
  }
  const execute: Schema[] = [
    {
      map: {
        version: '2.0.0',
        title: `${operation.name}: input`,
        inputs: {
          input: { schema: { $ref: refs.request }, variable: 'request.body', content: 'application/json' },
        },
        outputs,
        actions: inputActions,
        // Every generated element states its namespace, so unqualified XSD elements stay unqualified.
        options: { namespaceInheritance: false },
      },
    },
    {
      invoke: {
        version: '2.0.0',
        title: `${operation.name}: invoke`,
        'target-url': `$(${urlProperty})`,
        verb: 'POST',
        timeout: 60,
      },
    },
  ];
  const outputActions: Schema[] = (shapes.output?.copies ?? []).map((copy) => ({
    set: prefixed('output', copy.rest),
    from: `input.Envelope.Body.${copy.soap}`,
  }));
  if (shapes.output === undefined) outputActions.push({ set: 'output', value: '{}' });
  outputActions.push({ set: 'content-type', default: 'application/json' });
  execute.push({
    map: {
      version: '2.0.0',
      title: `${operation.name}: output`,
      inputs:
        refs.outputEnvelope === undefined
          ? {}
          : { input: { schema: refs.outputEnvelope, variable: 'message.body', content: 'application/xml' } },
      outputs: {
        output: { schema: { $ref: refs.response }, variable: 'message.body', content: 'application/json' },
        'content-type': {
          schema: { type: 'string', title: 'content-type' },
          variable: 'message.headers.content-type',
        },
      },
      actions: outputActions,
    },
  });
  return { operations: [operation.name], execute };
}

/** What a WSDL import produces: the target entry, and what a REST API around it needs. */
export interface GeneratedTarget {
  serviceName: string;
  /** `x-ibm-configuration.targets.<serviceName>`. */
  target: Schema;
  /** REST definitions (`<operation>Request`/`<operation>Response`), for the API's `definitions`. */
  definitions: Record<string, Schema>;
  paths: Record<string, Schema>;
  /** operation-switch cases (map → invoke → map per operation). */
  cases: Schema[];
  urlProperty: string;
  address: string;
}

/**
 * The `targets` entry and the REST pieces for one service of a WSDL (mode (b): add the target
 * to an existing API; {@link generateApiFromWsdl} wraps it into a new API).
 */
export function generateTarget(model: WsdlModel, wsdlFile: string, options: WsdlImportOptions = {}): GeneratedTarget {
  const { service, port } = pickService(model, options);
  const generator = new Generator(model, service.name);
  const soapVersion = port.soapVersion;
  const urlProperty = `${service.name}_url`;
  const targetPaths: Record<string, Schema> = {};
  const restDefinitions: Record<string, Schema> = {};
  const paths: Record<string, Schema> = {};
  const cases: Schema[] = [];
  for (const operation of operationsOf(model, port)) {
    const path = `wsdl:definitions/wsdl:binding[${port.binding.local}]/wsdl:operation[${operation.name}]`;
    const input = generator.shape(operation, operation.input, 'input', path);
    const output =
      operation.output === undefined ? undefined : generator.shape(operation, operation.output, 'output', path);
    const inputEnvelope = generator.ref(generator.envelope(operation.inputMessage, input.body, soapVersion));
    const outputEnvelope =
      output === undefined
        ? undefined
        : generator.ref(generator.envelope(operation.outputMessage!, output.body, soapVersion));
    restDefinitions[`${operation.name}Request`] = input.rest;
    restDefinitions[`${operation.name}Response`] = output?.rest ?? { type: 'object' };
    targetPaths[`/${operation.name}`] = {
      post: {
        summary: `Operation ${operation.name}`,
        operationId: operation.name,
        'x-ibm-soap': {
          'soap-action': operation.binding.soapAction,
          'soap-operation': qnameKey({ namespace: model.targetNamespace, local: operation.name }),
        },
        parameters: [{ name: 'body', in: 'body', required: true, schema: inputEnvelope }],
        responses: {
          default: {
            description: `SOAP reply of ${operation.name}`,
            schema: outputEnvelope ?? { type: 'object' },
          },
        },
      },
    };
    paths[`/${operation.name}`] = {
      post: {
        summary: `${operation.name} (SOAP ${soapVersion} operation of ${service.name})`,
        operationId: operation.name,
        parameters: [
          {
            name: 'body',
            in: 'body',
            required: true,
            schema: { $ref: `#/definitions/${operation.name}Request` },
          },
        ],
        responses: {
          '200': {
            description: `${operation.name} result`,
            schema: { $ref: `#/definitions/${operation.name}Response` },
          },
        },
      },
    };
    cases.push(
      assemblyCase(
        operation,
        { input, output },
        {
          request: `#/definitions/${operation.name}Request`,
          response: `#/definitions/${operation.name}Response`,
          inputEnvelope,
          outputEnvelope,
        },
        soapVersion,
        urlProperty,
      ),
    );
  }
  const target: Schema = {
    swagger: '2.0',
    info: { title: service.name, 'x-ibm-name': slug(service.name), version: options.version ?? '1.0.0' },
    basePath: `/${slug(service.name)}`,
    'x-ibm-configuration': {
      type: 'wsdl',
      'wsdl-definition': {
        wsdl: wsdlFile,
        service: service.name,
        port: port.name,
        'soap-version': soapVersion,
      },
    },
    paths: targetPaths,
    definitions: generator.definitions,
  };
  return {
    serviceName: service.name,
    target,
    definitions: restDefinitions,
    paths,
    cases,
    urlProperty,
    address: port.address,
  };
}

/** A new REST API document (Swagger 2.0 + x-ibm-configuration) around one WSDL service (mode (a)). */
export function generateApiFromWsdl(model: WsdlModel, wsdlFile: string, options: WsdlImportOptions = {}): Schema {
  const generated = generateTarget(model, wsdlFile, options);
  const name = slug(generated.serviceName);
  return {
    swagger: '2.0',
    info: {
      title: generated.serviceName,
      'x-ibm-name': name,
      version: options.version ?? '1.0.0',
      description: `REST API for the SOAP service ${generated.serviceName} (generated from ${wsdlFile}).`,
    },
    basePath: `/${name}`,
    schemes: ['https'],
    consumes: ['application/json'],
    produces: ['application/json'],
    securityDefinitions: { clientID: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
    security: [{ clientID: [] }],
    paths: generated.paths,
    definitions: generated.definitions,
    'x-ibm-configuration': {
      type: 'rest',
      gateway: 'datapower-api-gateway',
      enforced: true,
      testable: true,
      cors: { enabled: true },
      properties: {
        [generated.urlProperty]: {
          value: generated.address,
          description: `Endpoint of ${generated.serviceName} (soap:address)`,
          encoded: false,
        },
      },
      targets: { [generated.serviceName]: generated.target },
      assembly: {
        execute: [
          {
            'operation-switch': {
              version: '2.0.0',
              title: 'operation-switch',
              case: generated.cases,
              otherwise: [],
            },
          },
        ],
      },
    },
  };
}

/** Reads the WSDL `file` from `files` and generates the API document (mode (a)). */
export function importWsdl(file: string, files: Record<string, string>, options: WsdlImportOptions = {}): Schema {
  const model = readWsdl(file, filesFromMap(files));
  return generateApiFromWsdl(model, posix.basename(file), options);
}

/**
 * An import request whose text is a WSDL, turned into the generated API document (JSON text);
 * the WSDL and its sibling files are kept as the API's attachments.
 */
export function apiSourceFromWsdl(input: { text: string; file: string; attachments?: Record<string, string> }): {
  text: string;
  file: string;
  attachments: Record<string, string>;
} {
  // A path inside a bundle (`bundle/orders.wsdl`) is kept, so relative schemaLocations resolve.
  const given = posix.normalize(input.file.replace(/\\/g, '/'));
  const name = given.startsWith('../') || posix.isAbsolute(given) ? posix.basename(given) : given;
  const attachments = { ...input.attachments, [name]: input.text };
  const document = importWsdl(name, attachments);
  return { text: JSON.stringify(document), file: input.file, attachments };
}
