/**
 * How invoke reads what went wrong at the backend: a SOAP Fault in an error answer (always a
 * catchable `SOAPError`) and a failed connection, in words a consumer can act on.
 */
import { soapFaultText } from '../../soap/soap-fault.ts';

/** Whether an XML answer holds a SOAP Fault (its first 4 KiB are looked at). */
export function isSoapFault(body: Buffer, contentType: string | undefined): boolean {
  if (!contentType || !/xml/i.test(contentType) || body.length === 0) return false;
  const head = body.subarray(0, 4096).toString('utf8');
  return /<(?:[A-Za-z0-9_-]+:)?Fault[\s>]/.test(head);
}

/** The fault's text (SOAP 1.1 faultstring, 1.2 Reason/Text). */
export function faultString(body: Buffer, maxBytes: number): string {
  // Parsed safely where possible, so entities (&amp;) and SOAP 1.2 Reason/Text read right.
  const parsed = soapFaultText(body, maxBytes);
  if (parsed !== undefined) return parsed;
  const text = body.toString('utf8');
  const match = /<(?:[A-Za-z0-9_-]+:)?(?:faultstring|Text)[^>]*>([^<]*)</.exec(text);
  return match ? match[1].trim() : 'SOAP Fault';
}

/** Why a backend connection failed, in words (refused, host not found, reset). */
export function describeConnectError(error: unknown): string {
  const code = (error as { code?: string }).code;
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  if (code === 'ECONNREFUSED' || cause === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || cause === 'ENOTFOUND') return 'host not found';
  if (code === 'ECONNRESET' || cause === 'ECONNRESET' || code === 'UND_ERR_SOCKET')
    return 'connection reset by the backend';
  return (error as Error).message || 'connection failed';
}
