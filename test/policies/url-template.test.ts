/**
 * The target-url template, table-driven: each row a template, the values of one request and
 * the URL it must build — or the catalogue code it must refuse with (issue-12, finding 6).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PorticoError } from '../../src/errors.ts';
import type { ErrorCode } from '../../src/errors.ts';
import { compileUrlTemplate, pathValueProblem } from '../../src/policies/url-template.ts';
import { makeContext } from './helpers.ts';
import type { ContextOptions } from './helpers.ts';

interface Row {
  name: string;
  template: string;
  properties?: Record<string, string>;
  request: ContextOptions;
  /** The URL built, as `URL.href`. */
  href?: string;
  /** Or the code it is refused with. */
  refused?: ErrorCode;
}

const echo = 'http://backend/echo/{seg}/end';
const seg = (value: string): ContextOptions => ({ parameters: { seg: value } });
const dynamic = (target: unknown, extra: ContextOptions = {}): ContextOptions => ({
  ...extra,
  vars: { 'target-url': target },
});

const rows: Row[] = [
  // Values in a path segment: decoded, dot segments and backslashes refused in every encoding.
  { name: 'a plain segment', template: echo, request: seg('abc'), href: 'http://backend/echo/abc/end' },
  {
    name: 'a / splits segments under the base',
    template: echo,
    request: seg('a/b'),
    href: 'http://backend/echo/a/b/end',
  },
  {
    name: '? # and space are encoded',
    template: echo,
    request: seg('a b?c#d'),
    href: 'http://backend/echo/a%20b%3Fc%23d/end',
  },
  {
    name: 'three dots are a name, not a dot segment',
    template: echo,
    request: seg('...'),
    href: 'http://backend/echo/.../end',
  },
  {
    name: 'dots inside a name are kept',
    template: echo,
    request: seg('..a.b'),
    href: 'http://backend/echo/..a.b/end',
  },
  {
    name: 'a literal % is encoded',
    template: echo,
    request: seg('100%'),
    href: 'http://backend/echo/100%25/end',
  },
  {
    name: 'the reproduction: ../../secret/admin',
    template: echo,
    request: seg('../../secret/admin'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  { name: 'a lone ..', template: echo, request: seg('..'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  { name: 'a lone .', template: echo, request: seg('.'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  {
    name: '%2E%2E (upper case)',
    template: echo,
    request: seg('%2E%2E/%2E%2E/secret'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  { name: 'mixed .%2e', template: echo, request: seg('.%2e/x'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  { name: 'mixed %2E.', template: echo, request: seg('%2E.'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  {
    name: 'double-encoded %252e%252e',
    template: echo,
    request: seg('%252e%252e'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'encoded slash %2e%2e%2fsecret',
    template: echo,
    request: seg('%2e%2e%2fsecret'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'overlong UTF-8 %c0%ae%c0%ae',
    template: echo,
    request: seg('%c0%ae%c0%ae'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: "IIS's %u002e%u002e",
    template: echo,
    request: seg('%u002e%u002e'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  { name: "Tomcat's ..;", template: echo, request: seg('..;x/admin'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  {
    name: 'raw backslashes',
    template: echo,
    request: seg('..\\..\\secret'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'a backslash without dots',
    template: echo,
    request: seg('a\\b'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  { name: '%5c', template: echo, request: seg('a%5Cb'), refused: 'GW_UNSAFE_TARGET_VALUE' },
  {
    name: 'double-encoded %255c',
    template: echo,
    request: seg('a%255cb'),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: '$(request.parameters.v) with ../ (the second reproduction)',
    template: 'http://backend/echo/$(request.parameters.v)/end',
    request: { parameters: { v: '../../secret/admin' } },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  // `$(request.path)`: percent-encoded already, so escapes are kept, but it is checked too.
  {
    name: 'request.path keeps its escapes',
    template: 'http://backend/base$(request.path)',
    request: { path: '/items/a%20b;v=1' },
    href: 'http://backend/base/items/a%20b;v=1',
  },
  {
    name: 'request.path with backslashes (the third reproduction)',
    template: 'http://backend/base$(request.path)',
    request: { path: '/..\\..\\secret\\admin' },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'request.path with %2e%2e',
    template: 'http://backend/base$(request.path)',
    request: { path: '/%2e%2e/x' },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'request.path with raw ..',
    template: 'http://backend/base$(request.path)',
    request: { path: '/a/../../x' },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: 'request.path right after a host and port (the accessories inventory API)',
    template: 'http://backend:9084$(request.path)$(request.search)',
    request: { path: '/api/items', search: '?page=2' },
    href: 'http://backend:9084/api/items?page=2',
  },
  {
    name: 'request.path right after a host, with ..',
    template: 'http://backend:9084$(request.path)',
    request: { path: '/api/%2e%2e/admin' },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: "API Connect's default assembly with an origin-only target-url property",
    template: '$(target-url)$(api.operation.path)$(request.search)',
    properties: { 'target-url': 'http://backend:9084' },
    request: { path: '/orders', search: '?a=1' },
    href: 'http://backend:9084/orders?a=1',
  },
  {
    name: 'request.search is a query wherever it lands',
    template: 'http://backend/base$(request.path)$(request.search)',
    request: { path: '/x', search: '?a=1&b=%2F' },
    href: 'http://backend/base/x?a=1&b=%2F',
  },
  {
    name: 'request.search cannot start a fragment',
    template: 'http://backend/x$(request.search)',
    request: { search: '?a=1#f' },
    href: 'http://backend/x?a=1%23f',
  },
  // The query and the fragment: a value is one encoded value, whatever it holds.
  {
    name: 'a query value cannot add a parameter',
    template: 'http://backend/q?to={zip}',
    request: { parameters: { zip: '1&admin=true' } },
    href: 'http://backend/q?to=1%26admin%3Dtrue',
  },
  {
    name: 'a query value with ../ stays a value',
    template: 'http://backend/q?to={zip}',
    request: { parameters: { zip: '../../secret' } },
    href: 'http://backend/q?to=..%2F..%2Fsecret',
  },
  {
    name: 'a fragment value never reaches the path',
    template: 'http://backend/f#{v}',
    request: { parameters: { v: '../../x?y' } },
    href: 'http://backend/f#..%2F..%2Fx%3Fy',
  },
  // The host.
  {
    name: 'a host name in the host',
    template: 'http://{region}.backend/x',
    request: { parameters: { region: 'eu' } },
    href: 'http://eu.backend/x',
  },
  {
    name: 'a host value cannot add a path',
    template: 'http://{region}.backend/x',
    request: { parameters: { region: 'evil/' } },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  // API Connect dynamic routing: a value at the start is the flow's own base URL.
  {
    name: '$(target-url) set to a whole URL',
    template: '$(target-url)',
    request: dynamic('http://localhost:8689'),
    href: 'http://localhost:8689/',
  },
  {
    name: '$(target-url) with a path',
    template: '$(target-url)',
    request: dynamic('https://h:8443/v1/orders?x=1'),
    href: 'https://h:8443/v1/orders?x=1',
  },
  {
    name: '$(target-url) then a parameter in the path',
    template: '$(target-url)/orders/{id}',
    request: dynamic('http://h/v1', { parameters: { id: '7 8' } }),
    href: 'http://h/v1/orders/7%208',
  },
  {
    name: '$(target-url) then ../ in the path',
    template: '$(target-url)/orders/{id}',
    request: dynamic('http://h/v1', { parameters: { id: '../../admin' } }),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: '$(target-url)$(request.path) with a path value that would extend the host',
    template: '$(target-url){id}',
    request: dynamic('http://h', { parameters: { id: '.evil.example' } }),
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
  {
    name: '$(target-url) set to ftp:',
    template: '$(target-url)',
    request: dynamic('ftp://h/file'),
    refused: 'GW_INVALID_TARGET_URL',
  },
  {
    name: '$(target-url) set to file:',
    template: '$(target-url)/x',
    request: dynamic('file:///etc/passwd'),
    refused: 'GW_INVALID_TARGET_URL',
  },
  {
    name: '$(target-url) set to javascript:',
    template: '$(target-url)',
    request: dynamic('javascript:alert(1)'),
    refused: 'GW_INVALID_TARGET_URL',
  },
  {
    name: '$(target-url) not a URL',
    template: '$(target-url)',
    request: dynamic('localhost:8689/x'),
    refused: 'GW_INVALID_TARGET_URL',
  },
  {
    name: '$(target-url) not set',
    template: '$(target-url)/x',
    request: {},
    refused: 'GW_INVALID_TARGET_URL',
  },
  {
    name: 'a property holding the base URL is substituted at compile time',
    template: '$(api.properties.svc)/q/{id}',
    properties: { svc: 'http://svc/base' },
    request: { parameters: { id: 'a' } },
    href: 'http://svc/base/q/a',
  },
  {
    name: 'a property base still guards its path',
    template: '$(svc)/q/{id}',
    properties: { svc: 'http://svc/base' },
    request: { parameters: { id: '..' } },
    refused: 'GW_UNSAFE_TARGET_VALUE',
  },
];

describe('target-url templates (issue-12, finding 6)', () => {
  for (const row of rows) {
    it(`${row.name}: ${row.href ?? row.refused}`, () => {
      const url = compileUrlTemplate(row.template, row.properties ?? {});
      const ctx = makeContext(row.request);
      if (row.href !== undefined) {
        assert.equal(url.resolve(ctx).href, row.href);
        return;
      }
      const status = row.refused === 'GW_INVALID_TARGET_URL' ? 502 : 400;
      assert.throws(
        () => url.resolve(ctx),
        (error: unknown) => error instanceof PorticoError && error.code === row.refused && error.status === status,
      );
    });
  }

  it('names the placeholder and the reason in the refusal', () => {
    const url = compileUrlTemplate(echo, {});
    assert.throws(() => url.resolve(makeContext(seg('%2e%2e'))), {
      message: 'The value of {seg} cannot be used in the backend URL: it contains a dot segment (. or ..)',
    });
    const dynamicUrl = compileUrlTemplate('$(target-url)', {});
    assert.throws(() => dynamicUrl.resolve(makeContext(dynamic('ftp://h/'))), {
      message: 'The backend URL is not valid: $(target-url) holds a ftp: URL; only http and https are allowed',
    });
  });

  it('refuses at compile time a template whose base is not an absolute URL', () => {
    assert.throws(() => compileUrlTemplate('backend/echo/{seg}', {}), /does not start with an absolute URL/);
  });
});

describe('pathValueProblem', () => {
  const table: Array<[string, boolean]> = [
    ['/logistics/shipping', false],
    ['/a%20b/c%2Fd', false],
    ['/files/v1.2/x..y', false],
    ['/a/./b', true],
    ['/a/..', true],
    ['/a/%2e/b', true],
    ['/a/%2E%2e/b', true],
    ['/a%2f..%2fb', true],
    ['/a/%25252e%25252e/b', true],
    ['/a\\b', true],
    ['/a%5cb', true],
    ['/a%c0%afb', true],
  ];
  for (const [value, refused] of table) {
    it(`${value} is ${refused ? 'refused' : 'accepted'}`, () => {
      assert.equal(pathValueProblem(value) !== undefined, refused);
    });
  }
});

it('issue 12: a request value may not choose the backend host (compile-time refusal)', () => {
  for (const template of [
    '{url}',
    '{url}/x',
    'http://{host}/x',
    'https://{host}:8443/x',
    '$(request.headers.x-target)/a',
    'http://$(request.parameters.h)/',
  ]) {
    assert.throws(() => compileUrlTemplate(template, {}), /comes from the request/, template);
  }
  // A value inside a host the provider spells out, and the flow's own variables, stay allowed.
  for (const template of [
    'http://{region}.backend/x',
    '$(target-url)',
    '$(target-url)/orders/{id}',
    'http://backend/{id}',
  ]) {
    assert.doesNotThrow(() => compileUrlTemplate(template, {}), template);
  }
});
