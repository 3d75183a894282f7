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
 *
 * The phases, one file each: the file set (wsdl-files.ts), service, port and operations
 * resolved (wsdl-operations.ts), schemas (wsdl-target-schemas.ts), the assembly case
 * (wsdl-assembly.ts); this file puts them together into the target and the API.
 */
import { posix } from 'node:path';
import { readWsdl } from './wsdl.ts';
import { qnameKey } from './wsdl-model.ts';
import type { WsdlModel } from './wsdl-model.ts';
import { assemblyCase } from './wsdl-assembly.ts';
import { filesFromMap } from './wsdl-files.ts';
import { operationsOf, pickService } from './wsdl-operations.ts';
import { TargetSchemas } from './wsdl-target-schemas.ts';

type Schema = Record<string, unknown>;

export interface WsdlImportOptions {
  /** Service to import; default the first with a SOAP port. */
  service?: string;
  /** Port of that service; default its first SOAP port. */
  port?: string;
  /** API version; default 1.0.0. */
  version?: string;
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
  const generator = new TargetSchemas(model, service.name);
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
