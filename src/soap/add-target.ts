/**
 * WSDL import into an existing API (API Connect's "Add target service"): the SOAP service
 * becomes an `x-ibm-configuration.targets.<service>` entry of the API, and its soap:address the
 * API property `<service>_url` (overridable per catalog). The API's paths and assembly are
 * left for the provider to wire (map → invoke → map against the target's definitions).
 */
import { posix } from 'node:path';
import { filesFromMap } from './wsdl-files.ts';
import { generateTarget } from './wsdl-import.ts';
import { readWsdl } from './wsdl.ts';

type Document = Record<string, unknown>;

/** A copy of `document` with the WSDL's service added as a target (replacing one of that name). */
export function addWsdlTarget(
  document: Document,
  wsdl: { text: string; file: string; attachments?: Record<string, string> },
): { document: Document; service: string } {
  const name = posix.basename(wsdl.file.replace(/\\/g, '/'));
  const files = { ...wsdl.attachments, [name]: wsdl.text };
  const generated = generateTarget(readWsdl(name, filesFromMap(files)), name);
  const copy = structuredClone(document);
  const ibm = (copy['x-ibm-configuration'] ??= {}) as Document;
  const targets = (ibm.targets ??= {}) as Document;
  targets[generated.serviceName] = generated.target;
  const properties = (ibm.properties ??= {}) as Document;
  if (!Object.hasOwn(properties, generated.urlProperty)) {
    properties[generated.urlProperty] = {
      value: generated.address,
      description: `Endpoint of ${generated.serviceName} (soap:address)`,
      encoded: false,
    };
  }
  return { document: copy, service: generated.serviceName };
}
