/**
 * The size cap of an XML body a policy parses (xml-to-json, the map's XML inputs): the
 * operator's request limit (`PORTICO_MAX_REQUEST_BYTES`) for the consumer's request, which the
 * request-body phase has already held it to, and the backend limit (`PORTICO_MAX_BACKEND_BYTES`)
 * for anything else (a backend reply, a body the flow built). Only the cap follows the
 * settings: the node bound (one node per 8 bytes, src/soap/xml-node-count.ts) is the same for
 * every size.
 */
import { PorticoError } from '../errors.ts';
import { DEFAULT_MAX_XML_BYTES } from '../soap/xml.ts';
import type { XmlError } from '../soap/xml.ts';
import { AssemblyError } from './types.ts';
import type { PolicySettings } from './types.ts';

/** Largest XML body, in bytes, read from the consumer's request (`fromRequest`) or from anywhere else. */
export function xmlBodyLimit(
  settings: Pick<PolicySettings, 'maxRequestBytes' | 'maxBackendBodyBytes'>,
  fromRequest: boolean,
): number {
  return fromRequest ? (settings.maxRequestBytes ?? DEFAULT_MAX_XML_BYTES) : settings.maxBackendBodyBytes;
}

/**
 * A consumer's XML past the request limit: the request-body phase's own 413
 * (`GW_PAYLOAD_TOO_LARGE`), naming the policy that read it.
 */
export function requestXmlTooLarge(limit: number, policy: string, cause: XmlError): AssemblyError {
  return new AssemblyError('BadRequestError', new PorticoError('GW_PAYLOAD_TOO_LARGE', { limit }).message, {
    status: 413,
    reason: 'Payload Too Large',
    policy,
    cause,
  });
}
