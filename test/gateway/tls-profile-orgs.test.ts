/**
 * Review finding: TLS profiles were global, so any provider org's API could name the profile
 * holding another tenant's client certificate and pass that backend's mutual-TLS check. A
 * profile's `orgs` now limits who may name it (invoke, user registries, introspection), and a
 * client certificate without `orgs` is usable by no org.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tlsProfiles } from '../../src/config/readers.ts';
import { loadTlsProfiles } from '../../src/gateway/create-gateway.ts';
import { compileAssembly } from '../../src/gateway/flow.ts';
import { compileOperationSecurity } from '../../src/gateway/security/index.ts';
import { compileRegistry } from '../../src/identity/verifiers.ts';
import { tlsProfilesOf } from '../../src/policies/invoke/dispatchers.ts';
import { policyRegistry } from '../../src/policies/registry.ts';
import { PolicyCompileError } from '../../src/policies/types.ts';
import type { PolicySettings } from '../../src/policies/types.ts';
import { writeLoopbackCertificate } from '../helpers/tls.ts';
import { makeContext } from '../policies/helpers.ts';

let dir: string;
let server: Server;
let url: string;
let warnings: string[];
let settings: PolicySettings;

/** PORTICO_TLS_PROFILES as an operator writes it, read and loaded as at start. */
function load(written: Record<string, unknown>): PolicySettings {
  warnings = [];
  const logger = { warn: (_fields: object, message: string) => void warnings.push(message) };
  const loaded = loadTlsProfiles(tlsProfiles({ PORTICO_TLS_PROFILES: JSON.stringify(written) }), logger as never);
  return { maxBackendBodyBytes: 1 << 20, script: { timeoutMs: 200, memoryBytes: 1 << 24 }, ...loaded };
}

function invoke(org: string, profile: string, with_: PolicySettings = settings) {
  return compileAssembly(
    { execute: [{ invoke: { version: '2.0.0', title: 'call', 'target-url': url, 'tls-profile': profile } }] },
    {
      name: 'api',
      version: '1.0.0',
      document: {},
      properties: {},
      catalog: { name: 'sandbox', orgName: org },
      settings: with_,
    },
    policyRegistry,
  );
}

/** The publish error, as the provider sees it (management API, console, /ready). */
function compileError(compile: () => unknown): { rule: string; message: string } {
  try {
    compile();
  } catch (error) {
    assert.ok(error instanceof PolicyCompileError, String(error));
    return { rule: error.rule, message: error.message };
  }
  assert.fail('the API compiled');
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'portico-tls-orgs-'));
  const { key, cert } = writeLoopbackCertificate(dir);
  // A backend that admits only clients presenting the certificate (mutual TLS).
  server = createHttpsServer(
    {
      key: readFileSync(key),
      cert: readFileSync(cert),
      ca: readFileSync(cert),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"tenant":"alpha"}');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}/`;
  settings = load({
    'alpha-mtls': { ca: cert, cert, key, orgs: ['alpha'] },
    'public-ca': { ca: cert },
  });
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS profiles limited to provider orgs', () => {
  it('an API of the listed org reaches the mutual-TLS backend with the client certificate', async () => {
    const ctx = makeContext();
    await invoke('alpha', 'alpha-mtls:1.0.0')(ctx);
    assert.deepEqual(ctx.get('message.body'), { tenant: 'alpha' });
  });

  it('an invoke of another org naming the profile fails to compile exactly like an unknown profile', () => {
    const refused = compileError(() => invoke('beta', 'alpha-mtls'));
    const unknown = compileError(() => invoke('beta', 'no-such'));
    assert.equal(refused.rule, 'unknown-tls-profile');
    assert.equal(refused.message, unknown.message.replace('no-such', 'alpha-mtls'));
  });

  it('a profile without orgs and without a client certificate stays usable by every org', () => {
    assert.doesNotThrow(() => invoke('beta', 'public-ca'));
    assert.doesNotThrow(() => invoke('alpha', 'public-ca'));
  });

  it('a client certificate without orgs is usable by no org, and the start says how to list them', () => {
    const cert = join(dir, 'cert.pem');
    const open = load({ 'legacy-mtls': { cert, key: join(dir, 'key.pem') } });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /legacy-mtls .*"orgs": \["<provider org>"/);
    for (const org of ['alpha', 'beta'])
      assert.equal(compileError(() => invoke(org, 'legacy-mtls', open)).rule, 'unknown-tls-profile');
  });

  it('an introspection endpoint naming another org’s profile is refused like an unknown one', () => {
    const document = (profile: string) => ({
      swagger: '2.0',
      info: { title: 't', version: '1.0.0' },
      paths: {},
      securityDefinitions: {
        oauth: {
          type: 'oauth2',
          flow: 'application',
          tokenUrl: 'https://idp.example/token',
          scopes: { read: 'read' },
          'x-tokenIntrospect': { url: 'https://idp.example/introspect', 'tls-profile': profile },
        },
      },
      security: [{ oauth: ['read'] }],
    });
    const compile = (org: string | undefined, profile = 'alpha-mtls') =>
      compileOperationSecurity(document(profile), {}, { properties: {}, settings, org });
    assert.equal(compile('alpha').refused, false);
    const unknown = compile('beta', 'no-such');
    assert.ok(unknown.refused);
    for (const org of ['beta', undefined]) {
      const refused = compile(org);
      assert.ok(refused.refused, `org ${org}`);
      assert.equal(refused.reason, unknown.reason.replace('no-such', 'alpha-mtls'));
    }
  });

  it('a user registry of another org naming the profile is refused like an unknown one', () => {
    const record = (profile: string) => ({
      id: 'r1',
      name: 'corp',
      registry_type: 'authurl' as const,
      configuration: JSON.stringify({ url: 'https://idp.example/auth', timeout: 5, tls_profile: profile }),
      updated_at: '2024-01-01',
    });
    const compile = (org: string | undefined, profile = 'alpha-mtls') =>
      compileRegistry(record(profile), { tlsProfiles: tlsProfilesOf(settings, org) });
    assert.ok(!('refused' in compile('alpha')));
    const unknown = compile('beta', 'no-such');
    assert.ok('refused' in unknown);
    for (const org of ['beta', undefined]) {
      const refused = compile(org);
      assert.ok('refused' in refused, `org ${org}`);
      assert.equal(refused.refused, unknown.refused.replace('no-such', 'alpha-mtls'));
    }
  });

  it('a jwt-validate JWKS URL naming another org’s profile is refused like an unknown one', () => {
    const validate = (org: string, profile: string) =>
      compileAssembly(
        {
          execute: [
            {
              'jwt-validate': {
                version: '2.0.0',
                title: 'jwt',
                jwt: 'request.headers.authorization',
                'jwks-url': 'https://idp.example/jwks',
                'tls-profile': profile,
              },
            },
          ],
        },
        {
          name: 'api',
          version: '1.0.0',
          document: {},
          properties: {},
          catalog: { name: 'sandbox', orgName: org },
          settings,
        },
        policyRegistry,
      );
    assert.doesNotThrow(() => validate('alpha', 'alpha-mtls'));
    const refused = compileError(() => validate('beta', 'alpha-mtls'));
    const unknown = compileError(() => validate('beta', 'no-such'));
    assert.equal(refused.rule, 'unknown-tls-profile');
    assert.equal(refused.message, unknown.message.replace('no-such', 'alpha-mtls'));
    // An inherited name is no profile either.
    assert.equal(compileError(() => validate('alpha', 'constructor')).rule, 'unknown-tls-profile');
  });
});
