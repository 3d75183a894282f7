// The financing API end to end: examples/accessories/financing.yaml as is (only the sample's
// port rewritten, as the demo does), through the real gateway, against the real SOAP sample.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { startFinancingService } from '../../samples/financing-service.ts';
import type { RunningSample } from '../../samples/http-server.ts';
import { canonicalXml } from './canonical-xml.ts';
import { startSoapPlatform } from './harness.ts';
import type { SoapPlatform } from './harness.ts';
import { startRecorder } from './recorder.ts';
import type { Recorder } from './recorder.ts';

const examples = new URL('../../examples/accessories/', import.meta.url);
const yaml = readFileSync(new URL('financing.yaml', examples), 'utf8');
const wsdl = readFileSync(new URL('financing.wsdl', examples), 'utf8');

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('financing API through the gateway (REST → SOAP → JSON)', () => {
  let platform: SoapPlatform;
  let sample: RunningSample;
  let recorder: Recorder;
  let call: (query: string) => Promise<Response>;

  before(async () => {
    sample = await startFinancingService({ port: 0, host: '127.0.0.1' });
    recorder = await startRecorder({ upstream: sample.url });
    platform = await startSoapPlatform();
    const text = yaml.replaceAll('http://127.0.0.1:9081', recorder.url);
    const { base, clientId } = await platform.publish({
      text,
      file: 'financing.yaml',
      attachments: { 'financing.wsdl': wsdl },
    });
    call = (query) => fetch(`${base}/calculate?${query}`, { headers: { 'X-IBM-Client-Id': clientId } });
  });

  after(async () => {
    await platform?.close();
    await recorder?.close();
    await sample?.close();
  });

  it('answers 10000/36/5 with the number 299.71', async () => {
    const response = await call('amount=10000&duration=36&rate=5');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const text = await response.text();
    assert.equal(text, '{"paymentAmount":299.71}');
  });

  it('sends the SOAP request of API Connect notes §2, with the SOAPAction of the example', async () => {
    const before = recorder.requests.length;
    await (await call('amount=10000&duration=36&rate=5')).text();
    const sent = recorder.requests[before];
    assert.equal(sent.method, 'POST');
    assert.equal(sent.headers['content-type'], 'text/xml');
    assert.equal(sent.headers.soapaction, 'http://thinkibm-services.mybluemix.net/financing');
    assert.equal(
      sent.body,
      '<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/"><soap-env:Body>' +
        '<ser:financingRequest xmlns:ser="http://thinkibm-services.mybluemix.net"><ser:amount>10000</ser:amount><ser:duration>36</ser:duration><ser:rate>5</ser:rate></ser:financingRequest>' +
        '</soap-env:Body></soap-env:Envelope>',
    );
    assert.equal(
      canonicalXml(sent.body),
      canonicalXml(
        readFileSync(
          new URL('../fixtures/soap/Financing__document-literal-wrapped/expected-request.xml', import.meta.url),
          'utf8',
        ),
      ),
    );
  });

  it('answers 5000/12/3.5 with 424.61', async () => {
    const response = await call('amount=5000&duration=12&rate=3.5');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { paymentAmount: 424.61 });
  });

  it('refuses a missing parameter with 400 before any backend call', async () => {
    const before = recorder.requests.length;
    const response = await call('amount=10000&duration=36');
    assert.equal(response.status, 400);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.httpCode, '400');
    assert.match(body.moreInformation, /required API parameters are missing/);
    assert.equal(recorder.requests.length, before);
  });

  it('turns the sample SOAP Fault (duration 0) into a 500 envelope carrying the fault string', async () => {
    const response = await call('amount=10000&duration=0&rate=5');
    assert.equal(response.status, 500);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.httpCode, '500');
    assert.match(body.moreInformation, /duration must be at least 1 month/);
  });

  it('answers 502 ConnectionError within the timeout when the backend is down', async () => {
    const port = await closedPort();
    const text = yaml
      .replaceAll('http://127.0.0.1:9081', `http://127.0.0.1:${port}`)
      .replace('x-ibm-name: financing', 'x-ibm-name: financing-down')
      .replace('basePath: /financing\n', 'basePath: /financing-down\n');
    const { base, clientId } = await platform.publish({ text, file: 'financing-down.yaml' });
    const started = Date.now();
    const response = await fetch(`${base}/calculate?amount=10000&duration=36&rate=5`, {
      headers: { 'X-IBM-Client-Id': clientId },
    });
    assert.equal(response.status, 502);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.httpCode, '502');
    assert.match(body.moreInformation, /connection refused/);
    assert.ok(Date.now() - started < 5000);
  });
});
