/**
 * The response phase on its own: what `message` becomes (hop-by-hop and request-only fields
 * removed), CORS, and the one error writer with the fields an error carries.
 */
import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { PorticoError } from '../../../src/errors.ts';
import {
  ResponseHeaders,
  addCorsHeaders,
  errorAnswer,
  isPreflight,
  messageAnswer,
  preflightAnswer,
} from '../../../src/gateway/response.ts';
import { AssemblyError, RawBody } from '../../../src/policies/types.ts';
import { logger } from './fixture.ts';

describe('response phase: message → answer', () => {
  test('hop-by-hop fields (RFC 9110 §7.6.1) and request-only fields are removed', () => {
    const answer = messageAnswer(
      {
        status: { code: 201, reason: 'Created' },
        headers: {
          'Content-Type': 'text/plain',
          Connection: 'keep-alive',
          'Keep-Alive': 'timeout=5',
          'Transfer-Encoding': 'chunked',
          'Content-Length': '999',
          Upgrade: 'h2c',
          Authorization: 'Basic eA==',
          'X-IBM-Client-Id': 'secret-ish',
          'X-Order': '7',
        },
        body: new RawBody(Buffer.from('made'), 'text/plain'),
      },
      {},
      undefined,
    );
    assert.equal(answer.status, 201);
    assert.equal(String(answer.payload), 'made');
    assert.deepEqual(answer.headers.toObject(), { 'content-type': 'text/plain', 'x-order': '7' });
  });

  test('while message.headers is still the request copy, echoed request fields are dropped', () => {
    const requestHeaders = { 'x-trace': 'abc', 'content-type': 'application/json' };
    const copy = { ...requestHeaders, 'x-added': '1' };
    const answer = messageAnswer(
      { status: { code: 200, reason: 'OK' }, headers: copy, body: 'x' },
      requestHeaders,
      copy,
    );
    assert.deepEqual(answer.headers.toObject(), { 'content-type': 'application/json', 'x-added': '1' });
  });

  test('an object body is JSON with its content type', () => {
    const answer = messageAnswer({ status: { code: 200, reason: 'OK' }, headers: {}, body: { a: 1 } }, {}, undefined);
    assert.equal(answer.payload, '{"a":1}');
    assert.equal(answer.headers.toObject()['content-type'], 'application/json');
  });
});

describe('response phase: CORS', () => {
  function request(method: string, headers: Record<string, string>): IncomingMessage {
    const req = new IncomingMessage(new Socket());
    req.method = method;
    req.headers = headers;
    return req;
  }

  test('a preflight is OPTIONS with Origin and Access-Control-Request-Method', () => {
    const origin = 'https://app.example';
    assert.equal(isPreflight(request('OPTIONS', { origin, 'access-control-request-method': 'POST' })), true);
    assert.equal(isPreflight(request('OPTIONS', { origin })), false);
    assert.equal(isPreflight(request('GET', { origin, 'access-control-request-method': 'POST' })), false);
  });

  test('the preflight answer: 204, the path verbs, the asked headers, the origin', () => {
    const answer = preflightAnswer(
      { origin: 'https://app.example', 'access-control-request-headers': 'X-IBM-Client-Id' },
      ['GET', 'POST'],
    );
    assert.equal(answer.status, 204);
    assert.deepEqual(answer.headers.toObject(), {
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'X-IBM-Client-Id',
      'access-control-max-age': '600',
      'access-control-allow-origin': 'https://app.example',
    });
  });

  test('an answer to an Origin exposes the gateway fields and varies on Origin; none without Origin', () => {
    const headers = new ResponseHeaders();
    addCorsHeaders(headers, 'https://app.example');
    const fields = headers.toObject();
    assert.equal(fields['access-control-allow-origin'], 'https://app.example');
    assert.match(String(fields['access-control-expose-headers']), /Retry-After/);
    assert.equal(fields.vary, 'Origin');
    const none = new ResponseHeaders();
    addCorsHeaders(none, undefined);
    assert.deepEqual(none.toObject(), {});
  });
});

describe('response phase: the error writer', () => {
  test('a PorticoError keeps its status and carries its fields (405 + Allow)', () => {
    const error = new PorticoError('GW_METHOD_NOT_ALLOWED', { method: 'PUT' }, { headers: { Allow: 'GET, DELETE' } });
    const answer = errorAnswer(error, 'tx1', logger);
    assert.equal(answer.status, 405);
    assert.equal(answer.errorName, 'GW_METHOD_NOT_ALLOWED');
    assert.deepEqual(JSON.parse(String(answer.payload)), {
      httpCode: '405',
      httpMessage: 'Method Not Allowed',
      moreInformation: 'The method PUT is not allowed for the requested URI',
    });
    assert.deepEqual(answer.headers.toObject(), { allow: 'GET, DELETE', 'content-type': 'application/json' });
  });

  test('a 401 carries its WWW-Authenticate challenge', () => {
    const error = new PorticoError(
      'GW_USER_UNAUTHORIZED',
      {},
      { headers: { 'WWW-Authenticate': 'Basic realm="staff"' } },
    );
    assert.equal(errorAnswer(error, 'tx1', logger).headers.toObject()['www-authenticate'], 'Basic realm="staff"');
  });

  test("an assembly 429's own Retry-After wins over the plan's fields", () => {
    const plan: Array<[string, string]> = [
      ['X-RateLimit-Limit', 'name=default,100;'],
      ['X-RateLimit-Remaining', 'name=default,42;'],
    ];
    const error = new AssemblyError('AssemblyRateLimitError', 'Assembly Rate Limit exceeded', {
      status: 429,
      policy: 'ratelimit',
      headers: { 'X-RateLimit-Limit': 'name=hourly,1;', 'Retry-After': '1234' },
    });
    const answer = errorAnswer(error, 'tx1', logger, plan);
    const fields = answer.headers.toObject();
    assert.equal(answer.status, 429);
    assert.equal(fields['retry-after'], '1234');
    assert.equal(fields['x-ratelimit-limit'], 'name=hourly,1;');
    assert.equal(fields['x-ratelimit-remaining'], 'name=default,42;');
    assert.equal(JSON.parse(String(answer.payload)).moreInformation, 'Assembly Rate Limit exceeded (policy ratelimit)');
  });

  test('a 429 without a Retry-After of its own gets one of 1 second', () => {
    const error = new AssemblyError('Throttled', 'slow down', { status: 429 });
    assert.equal(errorAnswer(error, 'tx1', logger).headers.toObject()['retry-after'], '1');
  });

  test('anything else is a 500 that names the transaction and hides the cause', () => {
    const answer = errorAnswer(new TypeError('secret detail'), 'tx-77', logger);
    assert.equal(answer.status, 500);
    assert.equal(answer.errorName, 'RuntimeError');
    assert.equal(JSON.parse(String(answer.payload)).moreInformation, 'Internal gateway error (transaction tx-77)');
  });
});
