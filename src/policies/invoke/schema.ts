/**
 * The fields invoke and proxy share (proxy is an invoke whose result is the response).
 */
import type { JSONSchema } from '../../definitions/json-schema.ts';
import { accessControl, bool, int, oneOfStrings, str } from '../schema-kit.ts';

export // invoke and proxy share their fields: proxy is an invoke whose result is the response.
const invokeFields: Record<string, JSONSchema> = {
  'target-url': str('URL of the backend; `$(var)` and `{param}` are substituted per request.'),
  'backend-type': oneOfStrings(
    ['detect', 'xml', 'json', 'binary', 'graphql'],
    'How the backend response body is read.',
    'detect',
  ),
  'tls-profile': str('Name of the TLS client profile used for https backends.', ''),
  verb: oneOfStrings(
    ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'keep', 'Keep'],
    'HTTP method of the backend call; keep = the incoming request method.',
    'keep',
  ),
  timeout: int('Seconds to wait for the backend before a ConnectionError.', 60, { minimum: 1 }),
  compression: bool('Compress the request body (gzip) sent to the backend.', false),
  username: str('User name for HTTP basic authentication to the backend.'),
  password: str('Password for HTTP basic authentication to the backend.'),
  output: str('Variable receiving the response (body, headers, status); default message.', 'message'),
  'cache-key': str('Key identifying the cached response; default the URL.'),
  'cache-response': oneOfStrings(
    ['protocol', 'no-cache', 'time-to-live'],
    'Response caching: per HTTP cache headers, never, or for cache-ttl seconds.',
    'protocol',
  ),
  'cache-putpost-response': bool('Also cache responses to PUT and POST.', false),
  'cache-ttl': int('Seconds a cached response stays valid (time-to-live).', 900, { minimum: 0 }),
  'inject-proxy-headers': bool('Add X-Forwarded-For/-Host/-Proto headers to the backend call.', false),
  'decode-request-params': bool('URL-decode request parameters substituted into target-url.', false),
  'encode-plus-char': bool('Encode + as %2B in the query of target-url.', false),
  'keep-payload': bool('Send the request body even on DELETE.', false),
  'use-http-10': bool('Use HTTP/1.0 for the backend call (v5 field).', false),
  'http-version': oneOfStrings(['HTTP/1.0', 'HTTP/1.1', 'HTTP/2'], 'HTTP version of the backend call.', 'HTTP/1.1'),
  'http2-required': bool('Fail instead of falling back when HTTP/2 cannot be negotiated.', false),
  'header-control': accessControl('Which request headers are passed to the backend.', 'blocklist'),
  'parameter-control': accessControl('Which request query parameters are appended to target-url.', 'allowlist'),
  'follow-redirects': bool('Follow 3xx redirects from the backend.', false),
  'stop-on-error': {
    type: 'array',
    default: [],
    description:
      'Error names (ConnectionError, OperationError, SOAPError) that stop the flow and go to the catch; empty = never stop. v5 writes [null] for none.',
    items: { type: ['string', 'null'] },
  },
  'websocket-upgrade': bool('Pass WebSocket upgrade requests through to the backend.', false),
  'persistent-connection': bool('Keep the backend connection open for reuse.', true),
  'chunked-uploads': bool('Send the request body with chunked transfer encoding.', true),
  'graphql-send-type': oneOfStrings(
    ['detect', 'graphql', 'json'],
    'How a GraphQL request is sent to the backend.',
    'detect',
  ),
  'inject-user-agent': bool('Add the gateway User-Agent header to the backend call.', false),
};
