/**
 * SOAP Faults: finding one in a parsed envelope and reading its human-readable text —
 * SOAP 1.1 §4.4 `faultstring`, SOAP 1.2 Part 1 §5.4.2 `Reason/Text` (the first one).
 */
import { childElements, findChild, parseXml, textOf } from './xml.ts';
import type { XmlElement } from './xml.ts';

export const SOAP11_ENVELOPE_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_ENVELOPE_NS = 'http://www.w3.org/2003/05/soap-envelope';

/** The Fault element of a SOAP 1.1 or 1.2 envelope, if its Body holds one. */
export function faultOf(envelope: XmlElement): XmlElement | undefined {
  const namespace = envelope.namespace;
  if (envelope.local !== 'Envelope' || (namespace !== SOAP11_ENVELOPE_NS && namespace !== SOAP12_ENVELOPE_NS))
    return undefined;
  const body = findChild(envelope, namespace, 'Body');
  return body === undefined
    ? undefined
    : childElements(body).find((child) => child.local === 'Fault' && child.namespace === namespace);
}

/** The fault's text: SOAP 1.1 faultstring (unqualified), SOAP 1.2 Reason/Text. */
export function faultText(fault: XmlElement): string {
  const faultstring = childElements(fault).find((child) => child.local === 'faultstring');
  if (faultstring !== undefined) return textOf(faultstring).trim();
  const reason = childElements(fault).find((child) => child.local === 'Reason');
  const text = reason === undefined ? undefined : childElements(reason).find((child) => child.local === 'Text');
  return text === undefined ? 'SOAP Fault' : textOf(text).trim();
}

/** The fault text of a SOAP reply, or undefined when the text is not a (well-formed) SOAP Fault. */
export function soapFaultText(xml: string | Buffer, maxBytes: number): string | undefined {
  try {
    const fault = faultOf(parseXml(xml, { maxBytes }));
    return fault === undefined ? undefined : faultText(fault);
  } catch {
    return undefined;
  }
}
