import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { XMLParser } from 'fast-xml-parser';
import { monthlyPayment, startFinancingService } from '../../samples/financing-service.ts';
import { FINANCING_SOAP_ACTION, financingWsdl } from '../../samples/financing-wsdl.ts';
import type { RunningSample } from '../../samples/http-server.ts';

const V10_NS = 'http://thinkibm-services.mybluemix.net';
const V5_NS = 'http://services.think.ibm';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

let service: RunningSample;
before(async () => {
  service = await startFinancingService({ port: 0 });
});
after(() => service.close());

interface RequestParts {
  amount?: string;
  duration?: string;
  rate?: string;
  envelopePrefix?: string;
  namespace?: string;
}

/** A request envelope as the gateway's input map produces it; an undefined field is left out. */
function envelope({ amount, duration, rate, envelopePrefix = 'soap-env', namespace = V10_NS }: RequestParts): string {
  const field = (name: string, value: string | undefined) =>
    value === undefined ? '' : `<ser:${name}>${value}</ser:${name}>`;
  const p = envelopePrefix;
  return (
    `<${p}:Envelope xmlns:${p}="${SOAP_NS}"><${p}:Body>` +
    `<ser:financingRequest xmlns:ser="${namespace}">${field('amount', amount)}${field('duration', duration)}${field('rate', rate)}</ser:financingRequest>` +
    `</${p}:Body></${p}:Envelope>`
  );
}

function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${service.url}/financing/calculate`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml', soapaction: `"${FINANCING_SOAP_ACTION}"`, ...headers },
    body,
  });
}

const replyParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
});

/** Reads paymentAmount from a reply, checking its namespaces. */
async function paymentAmount(response: Response, namespace = V10_NS): Promise<number> {
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/xml; charset=utf-8');
  const reply = replyParser.parse(await response.text());
  const env = reply['soap-env:Envelope'];
  assert.equal(env['@_xmlns:soap-env'], SOAP_NS);
  assert.equal(env['@_xmlns:ser'], namespace);
  return Number(env['soap-env:Body']['ser:financingResult']['ser:paymentAmount']);
}

/** Reads faultcode and faultstring from a Fault reply. */
async function fault(
  response: Response,
  status = 500,
): Promise<{ faultcode: string; faultstring: string; raw: string }> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('content-type'), 'text/xml; charset=utf-8');
  const raw = await response.text();
  const body = replyParser.parse(raw)['soap-env:Envelope']['soap-env:Body']['soap-env:Fault'];
  return { faultcode: body.faultcode, faultstring: body.faultstring, raw };
}

describe('financing calculation', () => {
  test('10000 over 36 months at 5% is 299.71', async () => {
    assert.equal(await paymentAmount(await post(envelope({ amount: '10000', duration: '36', rate: '5' }))), 299.71);
  });

  test('5000 over 12 months at 3.5% is 424.61', async () => {
    assert.equal(await paymentAmount(await post(envelope({ amount: '5000', duration: '12', rate: '3.5' }))), 424.61);
  });

  test('a zero rate divides the amount evenly, rounded to cents', async () => {
    assert.equal(await paymentAmount(await post(envelope({ amount: '1000', duration: '3', rate: '0' }))), 333.33);
  });

  test('the formula matches an independent annuity computation', () => {
    // Annuity A = P·r / (1 − (1 + r)^−n) with r the monthly rate.
    const r = 7.25 / 1200;
    const expected = Math.round(((25000 * r) / (1 - (1 + r) ** -60)) * 100) / 100;
    assert.equal(monthlyPayment({ amount: 25000, duration: 60, rate: 7.25 }), expected);
  });

  test('accepts the soapenv and soap envelope prefixes', async () => {
    for (const envelopePrefix of ['soapenv', 'soap', 'S']) {
      const response = await post(envelope({ amount: '10000', duration: '36', rate: '5', envelopePrefix }));
      assert.equal(await paymentAmount(response), 299.71, envelopePrefix);
    }
  });

  test('answers in the v5 namespace when asked in it', async () => {
    const response = await post(envelope({ amount: '10000', duration: '36', rate: '5', namespace: V5_NS }), {
      soapaction: `${V5_NS}/financing`,
    });
    assert.equal(await paymentAmount(response, V5_NS), 299.71);
  });

  test('accepts a default-namespace request element with unprefixed children', async () => {
    const body =
      `<e:Envelope xmlns:e="${SOAP_NS}"><e:Body><financingRequest xmlns="${V10_NS}">` +
      '<amount>5000</amount><duration>12</duration><rate>3.5</rate></financingRequest></e:Body></e:Envelope>';
    assert.equal(await paymentAmount(await post(body)), 424.61);
  });

  test('reply has exactly the shape of the original stub', async () => {
    const response = await post(envelope({ amount: '10000', duration: '36', rate: '5' }));
    assert.equal(
      await response.text(),
      `<soap-env:Envelope xmlns:soap-env="${SOAP_NS}" xmlns:ser="${V10_NS}"><soap-env:Body><ser:financingResult>` +
        '<ser:paymentAmount>299.71</ser:paymentAmount></ser:financingResult></soap-env:Body></soap-env:Envelope>',
    );
  });
});

describe('financing faults', () => {
  const invalid: [string, RequestParts, RegExp][] = [
    ['negative amount', { amount: '-100', duration: '12', rate: '5' }, /amount must not be negative/],
    ['zero duration', { amount: '100', duration: '0', rate: '5' }, /duration must be at least 1 month/],
    ['negative duration', { amount: '100', duration: '-12', rate: '5' }, /duration must be at least 1 month/],
    ['non-integer duration', { amount: '100', duration: '12.5', rate: '5' }, /duration must be a whole number/],
    ['negative rate', { amount: '100', duration: '12', rate: '-1' }, /rate must not be negative/],
    ['non-numeric amount', { amount: 'ten', duration: '12', rate: '5' }, /amount must be a decimal number/],
    ['non-numeric rate', { amount: '100', duration: '12', rate: 'NaN' }, /rate must be a decimal number/],
    ['empty amount', { amount: '', duration: '12', rate: '5' }, /amount must be a decimal number/],
    ['missing amount', { duration: '12', rate: '5' }, /missing element amount/],
    ['missing duration', { amount: '100', rate: '5' }, /missing element duration/],
    ['missing rate', { amount: '100', duration: '12' }, /missing element rate/],
  ];
  for (const [name, parts, message] of invalid) {
    test(`${name} gives a Client fault`, async () => {
      const { faultcode, faultstring } = await fault(await post(envelope(parts)));
      assert.equal(faultcode, 'soap-env:Client');
      assert.match(faultstring, message);
    });
  }

  test('malformed XML gives a Client fault', async () => {
    const { faultcode, faultstring } = await fault(await post('<soap-env:Envelope xmlns:soap-env="x"><unclosed>'));
    assert.equal(faultcode, 'soap-env:Client');
    assert.match(faultstring, /malformed XML/);
  });

  test('a body without financingRequest gives a Client fault', async () => {
    const body = `<soap-env:Envelope xmlns:soap-env="${SOAP_NS}"><soap-env:Body><other/></soap-env:Body></soap-env:Envelope>`;
    assert.match((await fault(await post(body))).faultstring, /missing element financingRequest/);
  });

  test('a request element in an unknown namespace is not accepted', async () => {
    const response = await post(envelope({ amount: '1', duration: '1', rate: '1', namespace: 'urn:elsewhere' }));
    assert.match((await fault(response)).faultstring, /missing element financingRequest/);
  });

  test('a SOAP 1.2 envelope is a VersionMismatch', async () => {
    const body = envelope({ amount: '1', duration: '1', rate: '1' }).replace(
      SOAP_NS,
      'http://www.w3.org/2003/05/soap-envelope',
    );
    assert.equal((await fault(await post(body))).faultcode, 'soap-env:VersionMismatch');
  });

  test('an unknown SOAPAction gives a Client fault', async () => {
    const response = await post(envelope({ amount: '1', duration: '1', rate: '1' }), {
      soapaction: '"urn:other"',
    });
    assert.match((await fault(response)).faultstring, /unknown SOAPAction/);
  });

  test('a JSON body is refused with 415', async () => {
    const response = await post('{"amount":1}', { 'content-type': 'application/json' });
    assert.equal((await fault(response, 415)).faultcode, 'soap-env:Client');
  });

  test('a body over 1 MiB is refused with 413', async () => {
    const padding = ' '.repeat(1024 * 1024);
    const response = await post(envelope({ amount: '1', duration: '1', rate: '1' }) + padding);
    assert.match((await fault(response, 413)).faultstring, /exceeds/);
  });

  test('a chunked body over 1 MiB is cut off with 413', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await fetch(`${service.url}/financing/calculate`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body,
      duplex: 'half',
    } as RequestInit);
    assert.match((await fault(response, 413)).faultstring, /exceeds/);
  });

  test('the service still answers after a fault on the same connection', async () => {
    await fault(await post('not xml'));
    assert.equal(await paymentAmount(await post(envelope({ amount: '10000', duration: '36', rate: '5' }))), 299.71);
  });
});

describe('financing refuses DTDs and entities', () => {
  test('an internal entity is not expanded', async () => {
    const body =
      `<!DOCTYPE e [<!ENTITY big "10000">]><soap-env:Envelope xmlns:soap-env="${SOAP_NS}"><soap-env:Body>` +
      `<ser:financingRequest xmlns:ser="${V10_NS}"><ser:amount>&big;</ser:amount><ser:duration>36</ser:duration>` +
      '<ser:rate>5</ser:rate></ser:financingRequest></soap-env:Body></soap-env:Envelope>';
    const { faultcode, faultstring, raw } = await fault(await post(body));
    assert.equal(faultcode, 'soap-env:Client');
    assert.match(faultstring, /DTD/);
    assert.doesNotMatch(raw, /299\.71/);
  });

  test('an external entity is not fetched', async () => {
    const body =
      `<?xml version="1.0"?><!DOCTYPE e [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><soap-env:Envelope xmlns:soap-env="${SOAP_NS}">` +
      `<soap-env:Body><ser:financingRequest xmlns:ser="${V10_NS}"><ser:amount>&xxe;</ser:amount></ser:financingRequest>` +
      '</soap-env:Body></soap-env:Envelope>';
    const { raw } = await fault(await post(body));
    assert.doesNotMatch(raw, /root:/);
  });

  test('nested entity expansion (billion laughs) is refused', async () => {
    const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join('');
    const body = `<!DOCTYPE lolz [<!ENTITY l0 "lol">${levels}]><lolz>&l9;</lolz>`;
    const { faultcode, raw } = await fault(await post(body));
    assert.equal(faultcode, 'soap-env:Client');
    assert.ok(raw.length < 1000);
  });

  test('an undeclared entity reference is not resolved', async () => {
    const body = envelope({ amount: '&undefined;', duration: '12', rate: '5' });
    assert.equal((await fault(await post(body))).faultcode, 'soap-env:Client');
  });
});

describe('financing WSDL', () => {
  const wsdlParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_' });

  for (const query of ['?wsdl', '?WSDL']) {
    test(`GET ${query} serves the WSDL with the live address`, async () => {
      const response = await fetch(`${service.url}/financing/calculate${query}`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/xml/);
      const definitions = wsdlParser.parse(await response.text())['wsdl:definitions'];
      assert.equal(definitions['@_targetNamespace'], V10_NS);
      const service_ = definitions['wsdl:service'];
      assert.equal(service_['@_name'], 'financingService');
      assert.equal(service_['wsdl:port']['@_name'], 'financingPort');
      assert.equal(service_['wsdl:port']['soap:address']['@_location'], `${service.url}/financing/calculate`);
      const operation = definitions['wsdl:binding']['wsdl:operation'];
      assert.equal(operation['@_name'], 'financing');
      assert.equal(operation['soap:operation']['@_soapAction'], FINANCING_SOAP_ACTION);
    });
  }

  test('the WSDL in examples/accessories is the served one at the demo address', async () => {
    const file = await readFile(new URL('../../examples/accessories/financing.wsdl', import.meta.url), 'utf8');
    assert.equal(file, financingWsdl('http://127.0.0.1:9081/financing/calculate'));
  });

  test('other methods get 405 and unknown paths 404', async () => {
    const put = await fetch(`${service.url}/financing/calculate`, { method: 'PUT', body: 'x' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
    await put.arrayBuffer();
    const missing = await fetch(`${service.url}/elsewhere`);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
  });
});
