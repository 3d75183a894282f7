// SOAP 1.1 financingService: the monthly-payment calculation behind the financing API.
// Reproduces the original stub (ibm-apiconnect/pot-onprem-core docker/stubsvcs/routes/financing.js),
// with namespace-aware parsing and proper SOAP Faults where the stub answered NaN or crashed.
import { XMLParser } from 'fast-xml-parser';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyTooLargeError, publicBaseUrl, readBody, requestUrl, sendText, startSampleServer } from './http-server.ts';
import type { RunningSample, SampleServerOptions } from './http-server.ts';
import {
  FINANCING_LEGACY_NAMESPACE,
  FINANCING_NAMESPACE,
  FINANCING_SOAP_ACTION,
  financingWsdl,
} from './financing-wsdl.ts';

/** Path of the SOAP endpoint (and of its WSDL with `?wsdl`). */
export const FINANCING_PATH = '/financing/calculate';

/** SOAP 1.1 envelope namespace (SOAP 1.1 §4.1.2). */
export const SOAP_ENVELOPE_NAMESPACE = 'http://schemas.xmlsoap.org/soap/envelope/';

const REQUEST_NAMESPACES = new Set([FINANCING_NAMESPACE, FINANCING_LEGACY_NAMESPACE]);
const SOAP_ACTIONS = new Set(['', FINANCING_SOAP_ACTION, `${FINANCING_LEGACY_NAMESPACE}/financing`]);
const XML_CONTENT_TYPE = 'text/xml; charset=utf-8';
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const INTEGER = /^[+-]?\d+$/;
const MAX_AMOUNT = 1e12;
const MAX_PAYMENT = 1e15;

/** A SOAP 1.1 fault: `faultcode` local name (Client, Server, VersionMismatch) and the HTTP status to send. */
export class SoapFault extends Error {
  constructor(
    readonly faultcode: 'Client' | 'Server' | 'VersionMismatch',
    message: string,
    readonly status = 500,
  ) {
    super(message);
  }
}

/** The three inputs of the financing operation. */
export interface FinancingRequest {
  amount: number;
  duration: number;
  rate: number;
}

/**
 * Monthly annuity payment, rounded to cents, exactly as the original stub computes it.
 * A zero rate (0/0 in the stub) is the plain division amount/duration.
 * @example monthlyPayment({ amount: 10000, duration: 36, rate: 5 }) // 299.71
 */
export function monthlyPayment({ amount, duration, rate }: FinancingRequest): number {
  if (rate === 0) return Math.round((amount / duration) * 100) / 100;
  const J = rate / 100 / 12;
  const K = 1 / Math.pow(1 + J, duration);
  const quote = amount * (J / (1 - K));
  return Math.round(quote * 100) / 100;
}

type XmlNode = Record<string, unknown>;
type Scope = ReadonlyMap<string, string>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
});

function isElementKey(key: string): boolean {
  return !key.startsWith('@_') && !key.startsWith('?') && key !== '#text';
}

function splitName(qname: string): { prefix: string; local: string } {
  const colon = qname.indexOf(':');
  return colon < 0 ? { prefix: '', local: qname } : { prefix: qname.slice(0, colon), local: qname.slice(colon + 1) };
}

/** Adds the element's own xmlns declarations to the inherited scope. */
function extendScope(scope: Scope, node: unknown): Scope {
  if (!node || typeof node !== 'object') return scope;
  const next = new Map(scope);
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (key === '@_xmlns') next.set('', String(value));
    else if (key.startsWith('@_xmlns:')) next.set(key.slice('@_xmlns:'.length), String(value));
  }
  return next;
}

interface Element {
  local: string;
  namespace: string;
  node: unknown;
  scope: Scope;
}

/** Child elements of `node` with names resolved against the in-scope namespaces. */
function childElements(node: unknown, scope: Scope): Element[] {
  if (!node || typeof node !== 'object') return [];
  const children: Element[] = [];
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (!isElementKey(key)) continue;
    const { prefix, local } = splitName(key);
    for (const item of Array.isArray(value) ? value : [value]) {
      // An element's own xmlns declarations apply to its name (Namespaces in XML §6.1).
      const ownScope = extendScope(scope, item);
      const namespace = ownScope.get(prefix);
      if (namespace === undefined && prefix !== '')
        throw new SoapFault('Client', `undeclared namespace prefix "${prefix}"`);
      children.push({ local, namespace: namespace ?? '', node: item, scope: ownScope });
    }
  }
  return children;
}

function onlyChild(elements: Element[], local: string, accept: (namespace: string) => boolean, where: string): Element {
  const matches = elements.filter((element) => element.local === local && accept(element.namespace));
  if (matches.length === 0) throw new SoapFault('Client', `missing element ${local} in ${where}`);
  if (matches.length > 1) throw new SoapFault('Client', `element ${local} appears more than once in ${where}`);
  return matches[0];
}

function textOf(element: Element): string {
  const { node } = element;
  if (typeof node === 'string') return node;
  if (node && typeof node === 'object') {
    if (childElements(node, element.scope).length > 0)
      throw new SoapFault('Client', `${element.local} must be a simple value`);
    const text = (node as XmlNode)['#text'];
    return text === undefined ? '' : String(text);
  }
  return '';
}

/** Reads and validates amount, duration and rate from the financingRequest element. */
function readFinancingRequest(request: Element): FinancingRequest {
  const fields = childElements(request.node, request.scope);
  // elementFormDefault="qualified": children share the request namespace; unqualified ones are tolerated.
  const accept = (namespace: string) => namespace === request.namespace || namespace === '';
  const text = (local: string) => textOf(onlyChild(fields, local, accept, 'financingRequest')).trim();
  const amountText = text('amount');
  const durationText = text('duration');
  const rateText = text('rate');
  if (!DECIMAL.test(amountText)) throw new SoapFault('Client', `amount must be a decimal number, got "${amountText}"`);
  if (!INTEGER.test(durationText))
    throw new SoapFault('Client', `duration must be a whole number of months, got "${durationText}"`);
  if (!DECIMAL.test(rateText)) throw new SoapFault('Client', `rate must be a decimal number, got "${rateText}"`);
  const amount = Number(amountText);
  const duration = Number(durationText);
  const rate = Number(rateText);
  if (amount < 0) throw new SoapFault('Client', 'amount must not be negative');
  if (duration <= 0) throw new SoapFault('Client', 'duration must be at least 1 month');
  if (rate < 0) throw new SoapFault('Client', 'rate must not be negative');
  // Keeps the result a plain xs:decimal (no exponent notation).
  if (amount > MAX_AMOUNT) throw new SoapFault('Client', `amount must not exceed ${MAX_AMOUNT}`);
  if (!Number.isSafeInteger(duration) || !Number.isFinite(amount) || !Number.isFinite(rate)) {
    throw new SoapFault('Client', 'amount, duration or rate is out of range');
  }
  return { amount, duration, rate };
}

/** Parses a SOAP 1.1 envelope carrying a financingRequest; returns the inputs and the namespace used. */
export function parseFinancingEnvelope(xml: string): { request: FinancingRequest; namespace: string } {
  // DTDs are refused outright: no internal entities, no external ones, no expansion (XXE, billion laughs).
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml))
    throw new SoapFault('Client', 'DTDs and entity declarations are not allowed');
  let document: unknown;
  try {
    document = parser.parse(xml, true);
  } catch (error) {
    throw new SoapFault('Client', `malformed XML: ${error instanceof Error ? error.message : 'parse error'}`);
  }
  const roots = childElements(document, new Map());
  if (roots.length !== 1) throw new SoapFault('Client', 'the message must have exactly one root element');
  const envelope = roots[0];
  if (envelope.local !== 'Envelope')
    throw new SoapFault('Client', `root element must be Envelope, got ${envelope.local}`);
  // SOAP 1.1 §4.4.1: an envelope in another namespace is a VersionMismatch.
  if (envelope.namespace !== SOAP_ENVELOPE_NAMESPACE) {
    throw new SoapFault('VersionMismatch', `Envelope must be in namespace ${SOAP_ENVELOPE_NAMESPACE}`);
  }
  const isSoap = (namespace: string) => namespace === SOAP_ENVELOPE_NAMESPACE;
  const body = onlyChild(childElements(envelope.node, envelope.scope), 'Body', isSoap, 'Envelope');
  const request = onlyChild(
    childElements(body.node, body.scope),
    'financingRequest',
    (ns) => REQUEST_NAMESPACES.has(ns),
    'Body',
  );
  return { request: readFinancingRequest(request), namespace: request.namespace };
}

function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  return escapeText(value).replace(/"/g, '&quot;');
}

/** The reply envelope, in the shape of the original stub. */
export function financingResultEnvelope(paymentAmount: number, namespace: string): string {
  return (
    `<soap-env:Envelope xmlns:soap-env="${SOAP_ENVELOPE_NAMESPACE}" xmlns:ser="${escapeAttribute(namespace)}">` +
    `<soap-env:Body><ser:financingResult><ser:paymentAmount>${paymentAmount}</ser:paymentAmount></ser:financingResult>` +
    `</soap-env:Body></soap-env:Envelope>`
  );
}

/** A SOAP 1.1 Fault envelope (SOAP 1.1 §4.4). */
export function faultEnvelope(fault: SoapFault): string {
  return (
    `<soap-env:Envelope xmlns:soap-env="${SOAP_ENVELOPE_NAMESPACE}"><soap-env:Body><soap-env:Fault>` +
    `<faultcode>soap-env:${fault.faultcode}</faultcode><faultstring>${escapeText(fault.message)}</faultstring>` +
    `</soap-env:Fault></soap-env:Body></soap-env:Envelope>`
  );
}

function sendFault(res: ServerResponse, fault: SoapFault): void {
  sendText(res, fault.status, XML_CONTENT_TYPE, faultEnvelope(fault));
}

function checkHeaders(req: IncomingMessage): void {
  const contentType = (req.headers['content-type'] ?? '').toLowerCase();
  if (contentType !== '' && !contentType.includes('xml')) {
    throw new SoapFault('Client', `content-type must be text/xml, got "${contentType}"`, 415);
  }
  const action = req.headers.soapaction;
  // SOAP 1.1 §6.1.1: the value is a quoted URI; "" means the intent is in the body.
  if (typeof action === 'string' && !SOAP_ACTIONS.has(action.trim().replace(/^"(.*)"$/, '$1'))) {
    throw new SoapFault('Client', `unknown SOAPAction ${action}`);
  }
}

async function calculate(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    checkHeaders(req);
    const xml = await readBody(req);
    const { request, namespace } = parseFinancingEnvelope(xml);
    const payment = monthlyPayment(request);
    if (!(payment <= MAX_PAYMENT)) throw new SoapFault('Client', 'the inputs give a payment amount out of range');
    sendText(res, 200, XML_CONTENT_TYPE, financingResultEnvelope(payment, namespace));
  } catch (error) {
    if (error instanceof SoapFault) sendFault(res, error);
    else if (error instanceof BodyTooLargeError) sendFault(res, new SoapFault('Client', error.message, 413));
    else sendFault(res, new SoapFault('Server', 'internal error'));
  }
}

function serveWsdl(req: IncomingMessage, res: ServerResponse, baseUrl: string): void {
  const location = `${publicBaseUrl(req, baseUrl)}${FINANCING_PATH}`;
  sendText(res, 200, XML_CONTENT_TYPE, financingWsdl(location));
}

/** Request handler of the financing service. */
export function financingHandler(req: IncomingMessage, res: ServerResponse, baseUrl: string): Promise<void> | void {
  const url = requestUrl(req);
  if (url.pathname !== FINANCING_PATH) {
    sendFault(res, new SoapFault('Client', `no service at ${url.pathname}`, 404));
    return;
  }
  // The original stub also answered a bare GET with the WSDL.
  if (req.method === 'GET' || req.method === 'HEAD') return serveWsdl(req, res, baseUrl);
  if (req.method === 'POST') return calculate(req, res);
  res.setHeader('allow', 'GET, HEAD, POST');
  sendFault(res, new SoapFault('Client', `method ${req.method} not allowed`, 405));
}

/** Starts the SOAP financing service (default demo port 9081). */
export function startFinancingService(options: SampleServerOptions): Promise<RunningSample> {
  return startSampleServer('financing', financingHandler, options);
}
