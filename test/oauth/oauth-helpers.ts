/**
 * A real platform with a native OAuth provider `demo-oauth` enabled in `acme/sandbox`: an
 * authentication URL registry (a local server; alice / wonderland is the one good user), the
 * provider created and enabled through the management REST API, the API `sec:1.0.0` secured by
 * `x-ibm-oauth-provider` (read on /thing, write on /write), and a redirect target that answers 200.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UserRegistries } from '../../src/services/user-registries.ts';
import { basicHeaderFor } from '../../src/identity/types.ts';
import { secApi, startSecurityPlatform } from '../helpers/security-api.ts';
import type { SecurityPlatform, TestApp } from '../helpers/security-api.ts';

export const providerFile = {
  name: 'demo-oauth',
  title: 'Demo OAuth',
  provider_type: 'native',
  grants: ['application', 'access_code', 'password'],
  clients: ['confidential', 'public'],
  scopes: { read: 'Read things', write: 'Change things' },
  native_provider: {
    api: { basePath: '/oauth' },
    authorize_path: '/oauth2/authorize',
    token_path: '/oauth2/token',
    pkce: { enabled: true, required: false, allow_plain: false },
    access_token_ttl: 3600,
    refresh_token: { enabled: true, ttl: 86400 },
    user_registry: 'people',
  },
};

export const oauthScheme = {
  type: 'oauth2',
  flow: 'accessCode',
  'x-ibm-oauth-provider': 'demo-oauth',
  authorizationUrl: 'https://gateway.example/acme/sandbox/oauth/oauth2/authorize',
  tokenUrl: 'https://gateway.example/acme/sandbox/oauth/oauth2/token',
  scopes: { read: 'Read things', write: 'Change things' },
};

export interface OAuthPlatform {
  p: SecurityPlatform;
  /** `http://127.0.0.1:PORT/acme/sandbox/oauth` */
  issuer: string;
  redirectUri: string;
  app: TestApp;
  /** How many password checks the user registry has answered. */
  registryCalls(): number;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function startOAuthPlatform(env: Record<string, string> = {}): Promise<OAuthPlatform> {
  const good = basicHeaderFor('alice', 'wonderland');
  let registryCalls = 0;
  const registry = createServer((req, res) => {
    registryCalls += 1;
    res.writeHead(req.headers.authorization === good ? 200 : 403).end();
  });
  const registryUrl = await listen(registry);
  const target = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('client'));
  const redirectUri = `${await listen(target)}/callback`;
  const p = await startSecurityPlatform(env);
  const registries = new UserRegistries(p.t.platform.services);
  await registries.create(p.t.orgId, {
    name: 'people',
    registry_type: 'authurl',
    configuration: { url: `${registryUrl}/check`, timeout: 2 },
  });
  await registries.enable(p.t.orgId, 'sandbox', 'people');
  const created = await p.t.call('POST', '/api/orgs/acme/oauth-providers', providerFile);
  if (created.status !== 201) throw new Error(`provider create: ${created.status} ${JSON.stringify(created.body)}`);
  const enabled = await p.t.call('PUT', '/api/orgs/acme/catalogs/sandbox/oauth-providers/demo-oauth');
  if (enabled.status !== 204) throw new Error(`provider enable: ${enabled.status} ${JSON.stringify(enabled.body)}`);
  await p.publish(
    secApi({
      schemes: { oauth: oauthScheme },
      security: [{ oauth: ['read'] }],
      operations: { '/thing': {}, '/write': { security: [{ oauth: ['write'] }] } },
    }),
  );
  const app = await p.newApp('default');
  await registerRedirect(p, app.clientId, [redirectUri]);
  return {
    p,
    issuer: `${p.t.gateway}/acme/sandbox/oauth`,
    redirectUri,
    app,
    registryCalls: () => registryCalls,
    async close() {
      await p.close();
      registry.close();
      target.close();
    },
  };
}

/** Registers redirect URIs for the app a client id belongs to, and waits for the gateway to see them. */
export async function registerRedirect(p: SecurityPlatform, clientId: string, uris: string[]): Promise<void> {
  const gateway = p.t.platform.gateway!;
  const { app } = gateway.current!.credentials.get(clientId)!;
  // The portal's own service: its change names the app, and the reload reads that app again.
  await p.t.platform.consumerServices.setRedirectUris(app.consumerOrgId, app.id, uris);
  await gateway.reload();
}

/** A form POST, as a client library would send it. */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  };
}

/**
 * A code for `clientId`, as the consent page gives it (alice signs in and allows), without a
 * browser. `extra` adds authorization request parameters (code_challenge, scope...); one set to
 * undefined is left out of the request.
 */
export async function consentCode(o: OAuthPlatform, extra: Record<string, string | undefined> = {}): Promise<string> {
  const authorize = `${o.issuer}/oauth2/authorize`;
  const written = {
    response_type: 'code',
    client_id: o.app.clientId,
    redirect_uri: o.redirectUri,
    scope: 'read',
    state: 's1',
    ...extra,
  };
  const query = new URLSearchParams(
    Object.entries(written).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const page = await fetch(`${authorize}?${query}`);
  if (page.status !== 200) throw new Error(`consent page: ${page.status}`);
  const cookie = page.headers.get('set-cookie')!.split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1];
  const form = new URLSearchParams({
    ...Object.fromEntries(query),
    csrf,
    username: 'alice',
    password: 'wonderland',
    decision: 'allow',
  });
  const answer = await fetch(authorize, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const location = new URL(answer.headers.get('location') ?? 'about:blank');
  const code = location.searchParams.get('code');
  if (answer.status !== 302 || code === null) throw new Error(`consent: ${answer.status}, no code`);
  if (location.searchParams.get('state') !== query.get('state'))
    throw new Error('consent: the state came back changed');
  return code;
}

export function basic(clientId: string, secret: string): Record<string, string> {
  return {
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
  };
}
